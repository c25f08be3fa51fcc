#!/usr/bin/env python3
"""bench/run section reach: mail and Web Push, each against a Python baseline on the same peer.

    reach_load.py --url URL --sink-port P --sink-dir D --push-url U --count N

Mail. Baseline: Python's smtplib hands N messages of a verification mail's size to the SMTP sink
(Tests/Mail/smtp_sink.py), one connection each, one after another (what the server's worker
does). Tonight: N members are signed up (their verification mails are sent and counted first),
then N password-reset requests go in at once; each mail's time from its request to the sink's
acceptance is its queued-to-accepted time, and the last acceptance after the first request the
batch's time.

Web Push. Baseline: Python encrypts (http_ece, aes128gcm), signs a VAPID ES256 JWT
(cryptography) and posts N messages to the push-service stand-in (Tests/Push/push_service.py),
one after another. Tonight: one member with a subscription at the stand-in gets N friend requests
at once (one notification, and one push job, each); the batch's time runs from the first request
to the stand-in's N-th decrypted message.

Prints one JSON object of figures.
"""
import argparse
import base64
import concurrent.futures
import json
import os
import smtplib
import time
import urllib.request

import http_ece
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, utils

PASSWORD = "bench passphrase, long enough"


def call(base, method, path, body=None, token=None):
    request = urllib.request.Request(base + path, method=method)
    request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    data = json.dumps(body).encode() if body is not None else None
    with urllib.request.urlopen(request, data, timeout=60) as response:
        raw = response.read()
        return json.loads(raw) if raw else {}


def sink_messages(directory):
    found = []
    for name in sorted(os.listdir(directory)):
        if name[:1].isdigit() and name.endswith(".json"):
            with open(os.path.join(directory, name), encoding="utf-8") as f:
                found.append(json.load(f))
    return found


def wait(check, seconds=600):
    deadline = time.time() + seconds
    while time.time() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.05)
    raise SystemExit("timed out")


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * p))] if ordered else 0


def mail(args, run):
    sample = "Hi there,\r\n\r\nPlease confirm that this is your email address.\r\n\r\n" + ("x" * 70 + "\r\n") * 22
    started = time.perf_counter()
    for i in range(args.count):
        with smtplib.SMTP("127.0.0.1", args.sink_port, timeout=30) as smtp:
            smtp.sendmail("no-reply@bench.test", [f"base{run}-{i}@bench.test"],
                          f"From: <no-reply@bench.test>\r\nTo: <base{run}-{i}@bench.test>\r\n"
                          f"Subject: Confirm\r\n\r\n{sample}")
    baseline = time.perf_counter() - started

    def sign_up(i):
        return call(args.url, "POST", "/v1/auth/signup",
                    {"username": f"m{run}x{i}", "email": f"m{run}x{i}@bench.test", "password": PASSWORD})

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        accounts = list(pool.map(sign_up, range(args.count)))
    ours = lambda: [m for m in sink_messages(args.sink_dir) if m["rcpt_tos"][0].startswith(f"m{run}x")]
    wait(lambda: len(ours()) >= args.count)

    sent = {}

    def reset(i):
        sent[f"m{run}x{i}@bench.test"] = time.time()
        call(args.url, "POST", "/v1/auth/password-reset", {"email": f"m{run}x{i}@bench.test"})

    first = time.time()
    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        list(pool.map(reset, range(args.count)))
    resets = lambda: [m for m in ours() if "Subject: Choose a new password" in m["data"]]
    done = wait(lambda: (r := resets()) and len(r) >= args.count and r)
    latencies = [m["received_at"] - sent[m["rcpt_tos"][0]] for m in done]
    batch = max(m["received_at"] for m in done) - first
    return accounts, {
        "mail_count": args.count,
        "mail_python_seconds": round(baseline, 3),
        "mail_python_per_message_ms": round(baseline / args.count * 1000, 2),
        "mail_tonight_seconds": round(batch, 3),
        "mail_tonight_per_message_ms": round(batch / args.count * 1000, 2),
        "mail_queued_to_accepted_p50_ms": round(percentile(latencies, 0.5) * 1000, 1),
        "mail_queued_to_accepted_p99_ms": round(percentile(latencies, 0.99) * 1000, 1),
    }


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def push(args, accounts):
    def subscribe():
        request = urllib.request.Request(args.push_url + "/subscriptions", data=b"{}", method="POST")
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())

    def received(subscription):
        sid = subscription["endpoint"].rsplit("/", 1)[1]
        with urllib.request.urlopen(f"{args.push_url}/subscriptions/{sid}/messages", timeout=30) as response:
            return json.loads(response.read())

    # Baseline: what a Python sender does per message.
    vapid = ec.generate_private_key(ec.SECP256R1())
    vapid_public = b64(vapid.public_key().public_bytes(serialization.Encoding.X962,
                                                       serialization.PublicFormat.UncompressedPoint))
    target = subscribe()
    payload = json.dumps({"title": "Tonight", "body": "x sent you a friend request", "tag": "t" * 36}).encode()
    started = time.perf_counter()
    for _ in range(args.count):
        body = http_ece.encrypt(payload, private_key=ec.generate_private_key(ec.SECP256R1()),
                                dh=unb64(target["keys"]["p256dh"]), auth_secret=unb64(target["keys"]["auth"]),
                                salt=os.urandom(16), version="aes128gcm")
        header = b64(b'{"typ":"JWT","alg":"ES256"}')
        claims = b64(json.dumps({"aud": args.push_url, "exp": int(time.time()) + 43200,
                                 "sub": "mailto:bench@bench.test"}).encode())
        der = vapid.sign(f"{header}.{claims}".encode(), ec.ECDSA(hashes.SHA256()))
        r, s = utils.decode_dss_signature(der)
        jwt = f"{header}.{claims}.{b64(r.to_bytes(32, 'big') + s.to_bytes(32, 'big'))}"
        request = urllib.request.Request(target["endpoint"], data=body, method="POST", headers={
            "TTL": "86400", "Content-Encoding": "aes128gcm", "Authorization": f"vapid t={jwt}, k={vapid_public}"})
        urllib.request.urlopen(request, timeout=30).read()
    baseline = time.perf_counter() - started
    errors = [m["error"] for m in received(target) if m["error"]]
    if errors:
        raise SystemExit(f"baseline pushes refused: {errors[:3]}")

    # Tonight: one member with a browser, N friend requests at once.
    member = call(args.url, "POST", "/v1/auth/signup",
                  {"username": f"p{os.getpid()}", "email": f"p{os.getpid()}@bench.test", "password": PASSWORD})
    browser = subscribe()
    call(args.url, "POST", "/v1/me/web-push", browser, member["accessToken"])
    target_id = member["user"]["id"]
    first = time.time()
    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        list(pool.map(lambda a: call(args.url, "POST", "/v1/me/friend-requests", {"userId": target_id},
                                     a["accessToken"]), accounts[: args.count]))
    requests_done = time.time() - first
    messages = wait(lambda: (m := received(browser)) and len(m) >= args.count and m)
    batch = time.time() - first
    bad = [m["error"] for m in messages if m["error"]]
    if bad:
        raise SystemExit(f"pushes refused: {bad[:3]}")
    return {
        "push_count": args.count,
        "push_python_seconds": round(baseline, 3),
        "push_python_per_message_ms": round(baseline / args.count * 1000, 2),
        "push_tonight_seconds": round(batch, 3),
        "push_tonight_per_message_ms": round(batch / args.count * 1000, 2),
        "push_requests_seconds": round(requests_done, 3),
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--sink-port", type=int, required=True)
    parser.add_argument("--sink-dir", required=True)
    parser.add_argument("--push-url", required=True)
    parser.add_argument("--count", type=int, default=1000)
    args = parser.parse_args()
    run = os.getpid()
    accounts, figures = mail(args, run)
    figures.update(push(args, accounts))
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
