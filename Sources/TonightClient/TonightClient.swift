import TonightAPI
