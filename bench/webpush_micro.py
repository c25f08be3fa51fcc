"""Python's cost per Web Push message without the network, the baseline of bench/WebPushBench:
http_ece (the reference aes128gcm implementation) encrypting the same notification for a fresh
browser key, and an ES256 VAPID JWT signed with cryptography. Prints one JSON line like
WebPushBench's: microseconds per message for each and for both (median of five rounds).

    python bench/webpush_micro.py [COUNT]
"""
import base64
import json
import os
import sys
import time

import http_ece
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

count = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
browser = ec.generate_private_key(ec.SECP256R1())
p256dh = browser.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
auth = os.urandom(16)
payload = b'{"title":"Tonight","body":"Ana wants to be friends","url":"#/friends","kind":"friendRequest"}'
vapid = ec.generate_private_key(ec.SECP256R1())
vapid_public = vapid.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def encrypt():
    server = ec.generate_private_key(ec.SECP256R1())
    return http_ece.encrypt(payload, private_key=server, dh=p256dh, auth_secret=auth, salt=os.urandom(16),
                            version="aes128gcm")


def sign():
    claims = json.dumps({"aud": "https://push.example.com", "exp": int(time.time()) + 43200,
                         "sub": "mailto:bench@example.com"}, sort_keys=True, separators=(",", ":"))
    signing_input = b64(b'{"typ":"JWT","alg":"ES256"}') + "." + b64(claims.encode())
    r, s = decode_dss_signature(vapid.sign(signing_input.encode(), ec.ECDSA(hashes.SHA256())))
    return f"vapid t={signing_input}.{b64(r.to_bytes(32, 'big') + s.to_bytes(32, 'big'))}, k={b64(vapid_public)}"


def microseconds(body):
    rounds = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(count):
            body()
        rounds.append((time.perf_counter() - start) * 1e6 / count)
    return sorted(rounds)[2]


print(json.dumps({"count": count, "encrypt_us": microseconds(encrypt), "sign_us": microseconds(sign),
                  "both_us": microseconds(lambda: (encrypt(), sign()))}))
