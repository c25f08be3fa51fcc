"""A real SMTP server for the tests: PyPI's aiosmtpd (1.4.6) as a sink that stores what it receives.

    python3 smtp_sink.py --dir DIR [--cert CERT.pem --key KEY.pem] [--user USER --password PASS] [--port N]

Binds 127.0.0.1:N (N = 0, the default, picks a free port) and, once it accepts connections,
prints one line `PORT <n>` to stdout. Runs until SIGTERM/SIGINT, or until its parent process dies.

- --cert/--key: STARTTLS is offered (the connection starts in plain text).
- --user/--password: AUTH PLAIN and LOGIN are offered and required before MAIL (530 otherwise);
  only after STARTTLS when a cert is given. Wrong credentials: 535. Without --user: no AUTH.
- Recipients, by local part: `reject…` gets 550 5.1.1; `flaky<N>…` (flaky2-abc@example.test) gets
  451 4.3.0 the first N times this process sees that exact address, then 250; `slow…` waits 3 s
  before its 250. Everything else: 250.
- Each accepted message: DIR/<6-digit sequence>.json (written to DIR/.tmp-… then renamed) with
  mail_from, rcpt_tos, data (the message as received, dots unstuffed, CRLFs kept, decoded as
  UTF-8 with replacement), auth (the username or null), tls (bool), received_at (unix time).
- Each refused recipient: DIR/refusals.json (rewritten atomically) {"address": [codes…]}.

Started by the Swift tests (Tests/TonightServerTests) and by scripts/test for the browser test.
"""
import argparse, asyncio, json, logging, os, re, signal, ssl, sys, threading, time, warnings

from aiosmtpd.smtp import SMTP, AuthResult, LoginPassword


def write_json(directory, name, value):
    tmp = os.path.join(directory, f".tmp-{os.getpid()}-{name}")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(value, f, indent=1)
        f.flush()
        os.fsync(f.fileno())
    os.rename(tmp, os.path.join(directory, name))


class Sink:
    def __init__(self, directory, offer_auth):
        self.directory = directory
        self.offer_auth = offer_auth
        self.seen = {}  # address -> how many times RCPT named it (flaky addresses)
        self.refusals = {}  # address -> [codes]
        numbers = [int(n[:6]) for n in os.listdir(directory) if re.fullmatch(r"\d{6}\.json", n)]
        self.sequence = max(numbers, default=0)

    def refuse(self, address, code, text):
        self.refusals.setdefault(address, []).append(code)
        write_json(self.directory, "refusals.json", self.refusals)
        return f"{code} {text}"

    async def handle_EHLO(self, server, session, envelope, hostname, responses):
        session.host_name = hostname
        return responses if self.offer_auth else [r for r in responses if not r[4:].startswith("AUTH")]

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        local = address.rsplit("@", 1)[0].lower()
        if local.startswith("reject"):
            return self.refuse(address, 550, "5.1.1 Mailbox unavailable")
        flaky = re.match(r"flaky(\d+)", local)
        if flaky:
            self.seen[address] = self.seen.get(address, 0) + 1
            if self.seen[address] <= int(flaky.group(1)):
                return self.refuse(address, 451, "4.3.0 Try again later")
        if local.startswith("slow"):
            await asyncio.sleep(3)
        envelope.rcpt_tos.append(address)
        envelope.rcpt_options.extend(rcpt_options)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        self.sequence += 1
        name = f"{self.sequence:06d}.json"
        login = session.auth_data.login if session.authenticated else None
        write_json(self.directory, name, {
            "mail_from": envelope.mail_from,
            "rcpt_tos": list(envelope.rcpt_tos),
            "data": envelope.original_content.decode("utf-8", errors="replace"),
            "auth": login.decode("utf-8", errors="replace") if login is not None else None,
            "tls": session.ssl is not None,
            "received_at": time.time(),
        })
        return f"250 2.0.0 Ok: queued as {name[:6]}"


def authenticator(user, password):
    def check(server, session, envelope, mechanism, auth_data):
        ok = (isinstance(auth_data, LoginPassword)
              and auth_data.login == user.encode() and auth_data.password == password.encode())
        # handled=False: aiosmtpd's default (True) would leave a failed AUTH without any answer.
        return AuthResult(success=ok, handled=False, auth_data=auth_data if ok else None)
    return check


async def serve(args):
    os.makedirs(args.dir, exist_ok=True)
    context = None
    if args.cert:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args.cert, args.key)
    handler = Sink(args.dir, offer_auth=args.user is not None)
    options = dict(hostname="smtp-sink.test", tls_context=context)
    if args.user is not None:
        options.update(authenticator=authenticator(args.user, args.password), auth_required=True,
                       auth_require_tls=context is not None)
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: SMTP(handler, loop=loop, **options), "127.0.0.1", args.port)
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    print(f"PORT {server.sockets[0].getsockname()[1]}", flush=True)
    await stop.wait()
    server.close()


def main():
    # A child of Foundation's Process inherits a blocked signal mask: SIGTERM would be ignored.
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    parent = os.getppid()

    def watchdog():  # nothing else stops the sink if the test process dies (crash, kill -9)
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(0)

    threading.Thread(target=watchdog, daemon=True).start()
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dir", required=True)
    parser.add_argument("--cert")
    parser.add_argument("--key")
    parser.add_argument("--user")
    parser.add_argument("--password")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    if bool(args.cert) != bool(args.key) or (args.user is None) != (args.password is None):
        parser.error("--cert needs --key, --user needs --password (and the other way round)")
    # Quiet about what is meant: AUTH without TLS (tests without a certificate), and the
    # deprecated Session.login_data that aiosmtpd itself sets after each successful AUTH.
    warnings.filterwarnings("ignore", message="Requiring AUTH while not requiring TLS")
    quiet = ("auth_require_tls == False", "Session.login_data is deprecated")
    logging.getLogger("mail.log").addFilter(lambda r: not any(q in r.getMessage() for q in quiet))
    asyncio.run(serve(args))


if __name__ == "__main__":
    sys.exit(main())
