"""A tus 1.0 test peer (tuspy) for the server's resumable uploads on /v1/uploads.

    python tus_client.py SCENARIO --base http://127.0.0.1:PORT --token TOKEN --file PATH [--url URL] [--seed N]

The last line on stdout is one JSON object (diagnostics go to stderr); the exit status is 0 when
the scenario ran as designed (the caller judges the results) and nonzero on unexpected errors.
Every PATCH sent with tuspy carries Upload-Checksum (sha1), except in `cut`.

  cut           Uploads through an in-process TCP proxy that cuts the first K PATCH connections
                (K = 3..6, from --seed) after a random number of body bytes, closing both sides.
                After each cut it waits (HEAD, then an empty PATCH to see the lock is free) until the
                server holds every delivered byte (at most 15 s) and resumes with tuspy from there.
                -> {"postId", "cuts", "offsets" (server offsets after the cuts),
                    "expected" (offset before the cut + body bytes delivered), "url", "seed"}
  wrong_offset  Sends half with tuspy, then a PATCH with Upload-Offset 0, then finishes with tuspy.
                -> {"status" (of the wrong PATCH), "offset" (HEAD after it), "postId", "url"}
  start         Creates an upload and sends about a third of it. -> {"url" (absolute), "offset"}
  resume        Resumes --url with tuspy. -> {"postId", "url"}, or {"status", "error", "code"}
                when the server refuses it (e.g. 404, 410).
  race          Two tuspy uploaders (64 KB and 100 KB chunks) in threads on one upload; a 409 or 423
                makes the loser re-read the offset (HEAD) and go on.
                -> {"postId", "conflicts" (409/423 answers seen), "statuses", "url"}
"""
import argparse, faulthandler, json, random, socket, sys, threading, time
from urllib.parse import urlsplit

import requests
from tusclient import client as tus
from tusclient.exceptions import TusCommunicationError

METADATA = {"city": "Halifax$Nova Scotia$CA", "caption": "tus test peer"}
TIMEOUT = 300  # seconds any one socket operation may take (the machine may be slow)


def log(*parts):
    print(*parts, file=sys.stderr, flush=True)


def quietly(call, *args):
    try:
        call(*args)
    except OSError:
        pass


class CutProxy:
    """Forwards 127.0.0.1:<port> to `target`; the first `cuts` PATCH requests are cut mid-body:
    after forwarding a random part of the body, the proxy half-closes to the server (which keeps
    what arrived) and closes the client's connection (which sees a reset)."""

    def __init__(self, target, cuts, rng):
        self.target, self.left, self.rng = target, cuts, rng
        self.cut_log, self.lock = [], threading.Lock()  # cut_log: (Upload-Offset, body bytes sent)
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            conn, _ = self.server.accept()
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, client):
        client.settimeout(TIMEOUT)
        upstream = socket.create_connection(self.target, timeout=TIMEOUT)
        threading.Thread(target=self._pump, args=(upstream, client), daemon=True).start()
        try:
            buf = b""
            while b"\r\n\r\n" not in buf:
                data = client.recv(65536)
                if not data:
                    break
                buf += data
            head = buf.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
            fields = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in head[1:])}
            body_start, length, cut = len("\r\n".join(head)) + 4, int(fields.get("content-length", 0)), None
            with self.lock:
                if head[0].startswith("PATCH ") and length >= 2 and self.left > 0:
                    self.left -= 1
                    cut = body_start + self.rng.randint(1, length - 1)
            sent = 0
            while buf:
                if cut is not None and sent + len(buf) >= cut:
                    upstream.sendall(buf[: cut - sent])
                    self.cut_log.append((int(fields["upload-offset"]), cut - body_start))
                    log(f"proxy: cut PATCH at offset {self.cut_log[-1][0]} after {cut - body_start}/{length} bytes")
                    upstream.shutdown(socket.SHUT_WR)  # FIN after the bytes: the server reads them all
                    client.close()  # unread bytes pending: the client gets a reset
                    return
                upstream.sendall(buf)
                sent += len(buf)
                buf = client.recv(65536)
            upstream.shutdown(socket.SHUT_WR)
        except OSError as error:
            log(f"proxy: connection ended: {error!r}")
            for s in (client, upstream):
                quietly(s.shutdown, socket.SHUT_RDWR)

    @staticmethod
    def _pump(upstream, client):
        try:
            while data := upstream.recv(65536):
                quietly(client.sendall, data)  # after a cut, the server's answer is drained and dropped
        except OSError:
            pass
        for s in (upstream, client):
            quietly(s.close)


class Peer:
    def __init__(self, args):
        self.args, self.base = args, args.base.rstrip("/")
        self.headers = {"Authorization": f"Bearer {args.token}"}
        self.tus_headers = dict(self.headers, **{"Tus-Resumable": "1.0.0"})
        with open(args.file, "rb") as f:
            self.data = f.read()

    def uploader(self, base=None, checksum=True, **kwargs):
        """A tuspy uploader of --file (Upload-Checksum: sha1 on each PATCH unless `checksum` is
        false); with no url, it creates an upload on `base`/v1/uploads."""
        client = tus.TusClient((base or self.base) + "/v1/uploads", headers=dict(self.headers))
        up = client.uploader(file_path=self.args.file, metadata=dict(METADATA), upload_checksum=checksum, **kwargs)
        if not up.url:
            up.set_url(up.create_url())
        return up

    def on_server(self, url):
        return self.base + urlsplit(url).path

    def post_id(self, url):
        """The post a finished upload made (HEAD's Tonight-Post-Id)."""
        r = requests.head(self.on_server(url), headers=self.tus_headers, timeout=TIMEOUT)
        log(f"HEAD -> {r.status_code} offset {r.headers.get('Upload-Offset')} post {r.headers.get('Tonight-Post-Id')}")
        return r.headers.get("Tonight-Post-Id")

    def patch(self, url, offset, body):
        headers = dict(self.tus_headers, **{"Upload-Offset": str(offset)})
        headers["Content-Type"] = "application/offset+octet-stream"
        return requests.patch(self.on_server(url), data=body, headers=headers, timeout=TIMEOUT)

    def settle(self, up, expected, patience=15.0):
        """The server's offset after a failed PATCH, once no request holds the upload's lock (an
        empty PATCH at that offset answers 204, not 423 or 409) and it holds `expected` bytes (all
        that the cut request delivered), or, after `patience` seconds, what it holds then."""
        start, delay = time.monotonic(), 0.02
        while True:
            offset = up.get_offset()
            if offset == expected or expected is None or time.monotonic() - start > patience:
                status = self.patch(up.url, offset, b"").status_code
                if status == 204:
                    return offset
                log(f"empty PATCH at {offset} -> {status}")
            time.sleep(delay)
            delay = min(delay * 2, 0.5)

    def cut(self):
        rng = random.Random(self.args.seed)
        cuts = rng.randint(3, 6)
        target = urlsplit(self.base)
        proxy = CutProxy((target.hostname, target.port or 80), cuts, rng)
        # No checksum: the server keeps a cut request's bytes only when it promised none.
        up = self.uploader(base=f"http://127.0.0.1:{proxy.port}", checksum=False, chunk_size=len(self.data) + 1)
        offsets, expected = [], []
        while True:
            try:
                up.upload()
                break
            except TusCommunicationError as error:
                cut = proxy.cut_log[len(offsets)] if len(proxy.cut_log) > len(offsets) else None
                log(f"PATCH failed ({'cut' if cut else 'not cut'}): {error!r}")
                if cut is None and error.status_code not in (409, 423):
                    raise
                up.offset = self.settle(up, sum(cut) if cut else None)
                if cut:
                    expected.append(sum(cut))
                    offsets.append(up.offset)
                    log(f"cut {len(offsets)}/{cuts}: the server holds {up.offset} bytes ({sum(cut)} delivered)")
        return {"postId": self.post_id(up.url), "cuts": len(proxy.cut_log), "offsets": offsets, "expected": expected,
                "url": self.on_server(up.url), "seed": self.args.seed}

    def wrong_offset(self):
        up = self.uploader(chunk_size=len(self.data) // 2)
        up.upload_chunk()
        wrong = self.patch(up.url, 0, self.data[:4096])
        log(f"PATCH Upload-Offset 0 (server has {up.offset}) -> {wrong.status_code} {wrong.text}")
        offset = up.get_offset()
        up.chunk_size = len(self.data)
        up.upload()
        return {"status": wrong.status_code, "offset": offset,
                "postId": self.post_id(up.url), "url": up.url}

    def start(self):
        up = self.uploader(chunk_size=-(-len(self.data) // 3))
        up.upload_chunk()
        return {"url": up.url, "offset": up.get_offset()}

    def resume(self):
        if not self.args.url:
            raise SystemExit("resume needs --url")
        try:
            up = self.uploader(url=self.args.url, chunk_size=1 << 20)
            log(f"resuming {up.url} at {up.offset}")
            up.upload()
        except TusCommunicationError as error:
            if error.status_code is None:
                raise
            body = error.response_content or b"{}"
            code = json.loads(body).get("code") if body.startswith(b"{") else None
            return {"status": error.status_code, "error": str(error), "code": code}
        return {"postId": self.post_id(up.url), "url": up.url}

    def race(self):
        url = self.uploader().url
        statuses, lock, barrier, errors = {}, threading.Lock(), threading.Barrier(2), []

        def run(chunk_size):
            try:
                up = self.uploader(url=url, chunk_size=chunk_size)
                barrier.wait(TIMEOUT)
                while up.offset < len(self.data):
                    try:
                        up.upload_chunk()
                    except TusCommunicationError as error:
                        if error.status_code not in (409, 423):
                            raise
                        with lock:
                            statuses[error.status_code] = statuses.get(error.status_code, 0) + 1
                        log(f"{chunk_size // 1024} KB uploader: {error.status_code} at offset {up.offset}")
                        time.sleep(random.uniform(0.0, 0.05))  # jitter, so the two do not move in step
                        up.offset = up.get_offset()
            except Exception as error:  # handed to the main thread
                errors.append(error)
                barrier.abort()

        threads = [threading.Thread(target=run, args=(size,)) for size in (64 * 1024, 100 * 1024)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            raise errors[0]
        return {"postId": self.post_id(url), "conflicts": sum(statuses.values()),
                "statuses": {str(k): v for k, v in sorted(statuses.items())}, "url": url}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenario", choices=["cut", "wrong_offset", "start", "resume", "race"])
    parser.add_argument("--base", required=True)
    parser.add_argument("--token", required=True)
    parser.add_argument("--file", required=True)
    parser.add_argument("--url")
    parser.add_argument("--seed", type=int, default=random.randrange(1 << 30))
    args = parser.parse_args()
    faulthandler.dump_traceback_later(600, exit=True)  # never hang the caller: a stack dump, exit 1
    try:
        result = getattr(Peer(args), args.scenario)()
    except TusCommunicationError as error:
        sys.exit(f"unexpected tus failure (status {error.status_code}): {error} {error.response_content!r}")
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
