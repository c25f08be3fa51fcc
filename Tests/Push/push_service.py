"""A Web Push service stand-in for the tests: it speaks the push protocol (RFC 8030) and checks each
push it receives, decrypting it with PyPI's http_ece (RFC 8291, aes128gcm) and verifying its VAPID
JWT (RFC 8292, ES256) with PyPI's cryptography.

    python3 push_service.py [--port N]

An HTTP/1.1 server on 127.0.0.1:N (N = 0, the default, picks a free port); once it listens it prints
one line `PORT <n>` to stdout. Runs until SIGTERM/SIGINT, or until its parent process dies.

- POST /subscriptions, optional JSON body {"answers": [410]} (or [429, 500], …): subscribes as a
  browser does, with a fresh P-256 key pair and 16-byte auth secret kept here. 201 with
  {"endpoint": "http://127.0.0.1:<port>/push/<id>", "expirationTime": null,
   "keys": {"p256dh": <uncompressed public key>, "auth": <auth secret>}} (base64url, no padding).
  `answers` are the statuses the endpoint gives to successive valid pushes (429 with
  Retry-After: 1); once they are used up it answers 201.
- POST /push/<id>: a push (404 for an unknown id). Checked, in this order: TTL (an integer >= 0),
  Content-Encoding: aes128gcm, Urgency (very-low|low|normal|high, if present), Topic (1-32
  base64url characters, if present); Authorization: vapid t=<JWT>, k=<uncompressed P-256 key> with
  alg ES256 (typ JWT if present), a raw r||s signature that verifies with k, aud the origin
  http://127.0.0.1:<port>, exp in the future and at most 24 h away, sub mailto: or https://; a body
  of at most 4096 bytes, one record whose keyid is the sender's 65-byte public key, that
  decrypts. Any failure: 400 {"error": <the first failing check>}. Otherwise the next of `answers`,
  or 201 with Location: /messages/<n>.
  Every push (valid or not) is kept: {"payload": <decrypted text or null>, "ttl", "urgency",
  "topic" (the headers, ttl as an integer when it is one), "error": <first failing check or null>,
  "vapid": {"aud", "exp", "sub"} once the JWT's signature verified, else null, "status": <answered>}.
  Every check runs (a push with a bad JWT still has its payload). Chunked bodies: 411.
- GET /subscriptions/<id>/messages: 200 with the JSON list of those records, oldest first (404 for
  an unknown id).

Started by the Swift tests (Tests/TonightServerTests) and by scripts/test for the browser test.
"""
import argparse, base64, json, os, re, secrets, signal, struct, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import http_ece
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

URGENCIES = {"very-low", "low", "normal", "high"}
lock = threading.Lock()
subscriptions = {}  # id -> {"key", "auth", "answers", "messages"}
sequence = [0]  # pushes accepted with 201, for Location


class Failure(Exception):
    pass


def need(condition, reason):
    if not condition:
        raise Failure(reason)


def b64encode(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64decode(text, what):
    need(re.fullmatch(r"[A-Za-z0-9_-]*", text) and len(text) % 4 != 1, f"{what} is not base64url without padding")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def check_headers(headers, record):
    ttl = headers.get("TTL")
    need(re.fullmatch(r"[0-9]+", (ttl or "").strip()), f"TTL is missing or not an integer >= 0: {ttl!r}")
    record["ttl"] = int(ttl)
    encoding = headers.get("Content-Encoding")
    need((encoding or "").strip().lower() == "aes128gcm", f"Content-Encoding is not aes128gcm: {encoding!r}")
    urgency, topic = record["urgency"], record["topic"]
    need(urgency in URGENCIES | {None}, f"Urgency is not one of {sorted(URGENCIES)}: {urgency!r}")
    need(topic is None or re.fullmatch(r"[A-Za-z0-9_-]{1,32}", topic),
         f"Topic is not 1-32 base64url characters: {topic!r}")


def check_vapid(header, origin, record):
    scheme, _, rest = (header or "").strip().partition(" ")
    need(scheme.lower() == "vapid", f"Authorization is not `vapid t=…, k=…`: {header!r}")
    params = {}
    for part in rest.split(","):
        name, eq, value = part.strip().partition("=")
        need(eq, f"Authorization has a parameter without a value: {part.strip()!r}")
        params[name.strip().lower()] = value.strip().strip('"')
    need("t" in params and "k" in params, "Authorization lacks t= or k=")
    raw_key = b64decode(params["k"], "k")
    need(len(raw_key) == 65 and raw_key[0] == 4, "k is not an uncompressed P-256 point (65 bytes, 0x04 first)")
    try:
        key = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), raw_key)
    except ValueError:
        raise Failure("k is not a point on P-256")
    parts = params["t"].split(".")
    need(len(parts) == 3, "t is not a JWS compact serialization (three dot-separated parts)")
    try:
        head, claims = (json.loads(b64decode(part, "the JWT header or claims")) for part in parts[:2])
    except ValueError:
        raise Failure("the JWT header or claims are not JSON")
    need(isinstance(head, dict) and isinstance(claims, dict), "the JWT header or claims are not JSON objects")
    need(head.get("alg") == "ES256", f"the JWT's alg is not ES256: {head.get('alg')!r}")
    need(str(head.get("typ", "JWT")).upper() == "JWT", f"the JWT's typ is not JWT: {head.get('typ')!r}")
    signature = b64decode(parts[2], "the JWT signature")
    need(len(signature) == 64, f"the JWT signature is {len(signature)} bytes, not 64 (raw r||s)")
    der = encode_dss_signature(int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big"))
    try:
        key.verify(der, f"{parts[0]}.{parts[1]}".encode(), ec.ECDSA(hashes.SHA256()))
    except InvalidSignature:
        raise Failure("the JWT signature does not verify with k")
    record["vapid"] = {name: claims.get(name) for name in ("aud", "exp", "sub")}
    aud, exp, sub, now = claims.get("aud"), claims.get("exp"), claims.get("sub"), time.time()
    need(aud == origin, f"the JWT's aud is not {origin}: {aud!r}")
    need(type(exp) is int and now < exp <= now + 24 * 3600,
         f"the JWT's exp is not an integer in the next 24 hours: {exp!r} (now {int(now)})")
    need(isinstance(sub, str) and sub.startswith(("mailto:", "https://")),
         f"the JWT's sub is not a mailto: or https: URL: {sub!r}")


def check_body(body, subscription, record):
    need(len(body) <= 4096, f"the body is {len(body)} bytes, more than 4096")
    need(len(body) >= 21, f"the body is {len(body)} bytes, too short for an aes128gcm header")
    rs, id_length = struct.unpack("!LB", body[16:21])
    need(id_length == 65 and body[21:22] == b"\x04",
         f"the keyid is not the sender's 65-byte uncompressed public key ({id_length} bytes)")
    need(rs >= 18 and 86 + 17 <= len(body) <= 86 + rs,  # one record, of a tag and a delimiter at least
         f"the body is not one record of 17..rs bytes (rs {rs}, {len(body) - 86} bytes)")
    try:
        payload = http_ece.decrypt(body, private_key=subscription["key"], auth_secret=subscription["auth"],
                                   version="aes128gcm")
    except (http_ece.ECEException, ValueError) as error:
        raise Failure(f"the body does not decrypt: {getattr(error, 'message', error)}")
    record["payload"] = payload.decode("utf-8", errors="replace")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):  # no request log: the tests' output stays readable
        pass

    def reply(self, status, value=None, headers=()):
        body = b"" if value is None else json.dumps(value).encode()
        self.send_response(status)
        for name, header in headers:
            self.send_header(name, header)
        if value is not None:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        match = re.fullmatch(r"/subscriptions/([A-Za-z0-9_-]+)/messages", self.path)
        with lock:
            subscription = subscriptions.get(match.group(1)) if match else None
            messages = list(subscription["messages"]) if subscription else None
        if messages is None:
            return self.reply(404, {"error": "no such subscription"})
        self.reply(200, messages)

    def do_POST(self):
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():  # not read here
            self.close_connection = True
            return self.reply(411, {"error": "send the body with a Content-Length"})
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path == "/subscriptions":
            return self.subscribe(body)
        match = re.fullmatch(r"/push/([A-Za-z0-9_-]+)", self.path)
        with lock:
            subscription = subscriptions.get(match.group(1)) if match else None
        if subscription is None:
            return self.reply(404, {"error": "no such subscription"})
        self.push(match.group(1), subscription, body)

    def subscribe(self, body):
        try:
            answers = (json.loads(body).get("answers") or []) if body.strip() else []
            if not all(type(a) is int and 200 <= a <= 599 for a in answers):
                raise ValueError
        except (ValueError, AttributeError, TypeError):
            return self.reply(400, {"error": 'the body is not {"answers": [status, …]}'})
        key, auth, identifier = ec.generate_private_key(ec.SECP256R1()), os.urandom(16), secrets.token_urlsafe(12)
        with lock:
            subscriptions[identifier] = {"key": key, "auth": auth, "answers": list(answers), "messages": []}
        public = key.public_key().public_bytes(Encoding.X962, PublicFormat.UncompressedPoint)
        self.reply(201, {"endpoint": f"{self.origin()}/push/{identifier}", "expirationTime": None,
                         "keys": {"p256dh": b64encode(public), "auth": b64encode(auth)}})

    def push(self, identifier, subscription, body):
        record = {"payload": None, "ttl": self.headers.get("TTL"), "urgency": self.headers.get("Urgency"),
                  "topic": self.headers.get("Topic"), "error": None, "vapid": None, "status": None}
        errors = []  # every check runs (payload and claims are recorded), the first failure answers
        for check in (lambda: check_headers(self.headers, record),
                      lambda: check_vapid(self.headers.get("Authorization"), self.origin(), record),
                      lambda: check_body(body, subscription, record)):
            try:
                check()
            except Failure as failure:
                errors.append(str(failure))
        headers = []
        with lock:
            if errors:
                record["error"], record["status"] = errors[0], 400
            elif subscription["answers"]:
                record["status"] = subscription["answers"].pop(0)
                if record["status"] == 429:
                    headers.append(("Retry-After", "1"))
            else:
                sequence[0] += 1
                record["status"] = 201
                headers.append(("Location", f"/messages/{sequence[0]}"))
            subscription["messages"].append(record)
        if errors:
            print(f"push_service: push to {identifier} refused: {errors[0]}", file=sys.stderr, flush=True)
            return self.reply(400, {"error": errors[0]})
        self.reply(record["status"], {"status": record["status"]} if record["status"] >= 400 else None, headers)

    def origin(self):
        return f"http://127.0.0.1:{self.server.server_address[1]}"


def main():
    # A child of Foundation's Process inherits a blocked signal mask: SIGTERM would be ignored.
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    parent = os.getppid()

    def watchdog():  # nothing else stops the stand-in if the test process dies (crash, kill -9)
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(0)

    threading.Thread(target=watchdog, daemon=True).start()
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    # A push service takes many connections at once: socketserver's backlog of 5 would drop the
    # SYNs of a busy sender's burst (each retried a second later).
    ThreadingHTTPServer.request_queue_size = 128
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: sys.exit(0))
    print(f"PORT {server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    finally:
        server.server_close()


if __name__ == "__main__":
    sys.exit(main())
