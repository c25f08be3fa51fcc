#!/usr/bin/env python3
"""Tonight as a cluster: two `tonight serve` processes on one PostgreSQL and one S3 store (moto)
behind haproxy, checked through it the way an operator would (issue: many instances, one
PostgreSQL), and backups restored (pg_dump/pg_restore, `tonight backup`/`tonight restore` on
SQLite). Run by scripts/test step 3b; it starts and stops everything but PostgreSQL.

  cluster_test.py --bin .build/debug/tonight --pg-url postgres://postgres@127.0.0.1:PORT/db \
                  --pg-restart 'CMD' --work DIR

Needs haproxy and ffmpeg on PATH, pg_dump and pg_restore beside --psql, and requests, websockets and moto in the Python running it.

Each check prints one line; the first failure stops the run with its reason (exit 1).
"""
import argparse
import base64
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor

import requests
from websockets.sync.client import connect as ws_connect

CITY = "Halifax$Nova%20Scotia$CA"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Failed(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failed(message)


class Cluster:
    def __init__(self, args):
        self.args = args
        self.work = args.work
        self.procs = {}
        self.ports = {"a": free_port(), "b": free_port()}
        self.lb_port = free_port()
        self.s3_port = free_port()
        self.key = base64.b64encode(os.urandom(32)).decode()
        # One VAPID key for both, as for JWT_KEY: browsers subscribe with its public half.
        self.vapid = base64.urlsafe_b64encode(os.urandom(32)).decode().rstrip("=")
        self.sockets = contextlib.ExitStack()
        # A clip of about 1 MB for the resumable upload (noise does not compress).
        self.clip = os.path.join(self.work, "clip.mp4")
        subprocess.run(
            ["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=duration=2:size=320x240:rate=25", "-vf",
             "noise=alls=60:allf=t", "-c:v", "libx264", "-preset", "ultrafast", "-b:v", "4M", "-pix_fmt", "yuv420p",
             self.clip], check=True)

    # --- processes -------------------------------------------------------------------------

    def env(self, name, extra=None):
        env = dict(os.environ)
        env.update({
            "DATABASE_URL": self.args.pg_url,
            "JWT_KEY": self.key,
            "WEB_PUSH_VAPID_KEY": self.vapid,
            "DATA_DIR": os.path.join(self.work, name),
            "HTTP_HOST": "127.0.0.1",
            "HTTP_PORT": str(self.ports[name]),
            "HTTP_TRUSTED_PROXIES": "127.0.0.1",
            "AUTH_BCRYPT_COST": "4",
            "RATE_SIGNUP_PER_HOUR": "150",
            "MEDIA_STORAGE": "s3",
            "S3_ENDPOINT": f"http://127.0.0.1:{self.s3_port}",
            "S3_BUCKET": "tonight-cluster",
            "S3_REGION": "us-east-1",
            "S3_ACCESS_KEY": "test",
            "S3_SECRET_KEY": "test",
            "JOBS_POLL_MS": "100",
            "LOG_LEVEL": "info",
        })
        env.update(extra or {})
        return env

    def start(self, name, extra=None):
        log = open(os.path.join(self.work, f"{name}.log"), "ab")
        self.procs[name] = subprocess.Popen(
            [self.args.bin, "serve"], env=self.env(name, extra), stdout=log, stderr=subprocess.STDOUT)
        self.wait_healthy(f"http://127.0.0.1:{self.ports[name]}/health", name)

    def wait_healthy(self, url, what, seconds=120):
        deadline = time.time() + seconds
        while time.time() < deadline:
            try:
                if requests.get(url, timeout=2).status_code == 200:
                    return
            except requests.RequestException:
                pass
            time.sleep(0.2)
        raise Failed(f"{what} did not become healthy at {url}")

    def start_s3(self):
        log = open(os.path.join(self.work, "moto.log"), "ab")
        self.procs["s3"] = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.s3_port)],
            stdout=log, stderr=subprocess.STDOUT)
        self.wait_healthy(f"http://127.0.0.1:{self.s3_port}/moto-api/", "moto")
        requests.put(f"http://127.0.0.1:{self.s3_port}/tonight-cluster", timeout=5).raise_for_status()

    def start_haproxy(self):
        # scripts/haproxy.cfg, the example of docs/operations.md: a failed connection is retried on
        # the other instance.
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "haproxy.cfg")
        env = dict(os.environ, TONIGHT_LB=f"127.0.0.1:{self.lb_port}", TONIGHT_A=f"127.0.0.1:{self.ports['a']}",
                   TONIGHT_B=f"127.0.0.1:{self.ports['b']}")
        log = open(os.path.join(self.work, "haproxy.log"), "ab")
        haproxy = shutil.which("haproxy") or "/usr/sbin/haproxy"
        self.procs["lb"] = subprocess.Popen(
            [haproxy, "-db", "-f", path], env=env, stdout=log, stderr=subprocess.STDOUT)
        self.wait_healthy(self.lb("/health"), "haproxy")

    def stop_all(self):
        self.sockets.close()
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait()

    # --- HTTP ------------------------------------------------------------------------------

    def lb(self, path):
        return f"http://127.0.0.1:{self.lb_port}{path}"

    def direct(self, name, path):
        return f"http://127.0.0.1:{self.ports[name]}{path}"

    def call(self, method, url, token=None, body=None, timeout=15):
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return requests.request(method, url, json=body, headers=headers, timeout=timeout)

    def sign_up(self, name, url=None):
        response = self.call("POST", url or self.lb("/v1/auth/signup"), body={
            "username": name, "email": f"{name}@example.com", "password": "a long enough passphrase"})
        return response

    def member(self, name, url=None):
        response = self.sign_up(name, url)
        check(response.status_code in (200, 201), f"sign-up of {name}: {response.status_code} {response.text}")
        body = response.json()
        return {"name": name, "token": body["accessToken"], "id": body["user"]["id"]}

    def psql(self, sql):
        return subprocess.run(
            [self.args.psql, self.args.pg_url, "-qtAc", sql], check=True, capture_output=True, text=True).stdout.strip()


def run_checks(c):
    results = []

    def passed(text):
        results.append(text)
        print(f"  ok  {text}", flush=True)

    # 1. A token from one instance works on the other.
    ana = c.member("ana", c.direct("a", "/v1/auth/signup"))
    me = c.call("GET", c.direct("b", "/v1/me"), ana["token"])
    check(me.status_code == 200, f"A's token on B: {me.status_code} {me.text}")
    passed("a token issued by one instance works on the other")

    # 2. A chat message posted on one arrives live on a socket held by the other.
    ben = c.member("ben", c.direct("b", "/v1/auth/signup"))
    c.call("POST", c.lb("/v1/me/friend-requests"), ana["token"], {"userId": ben["id"]}).raise_for_status()
    c.call("POST", c.lb(f"/v1/me/friend-requests/{ana['id']}/accept"), ben["token"]).raise_for_status()
    conversation = c.call("POST", c.lb("/v1/conversations"), ana["token"], {"userId": ben["id"]}).json()["id"]
    with ws_connect(f"ws://127.0.0.1:{c.ports['b']}/v1/live?token={ben['token']}", open_timeout=10) as ws:
        check(json.loads(ws.recv(timeout=10)).get("type") == "ready", "no ready on B's socket")
        sent = c.call("POST", c.direct("a", f"/v1/conversations/{conversation}/messages"), ana["token"],
                      {"text": "across the cluster"})
        check(sent.status_code in (200, 201), f"message on A: {sent.status_code} {sent.text}")
        deadline = time.time() + 5
        arrived = False
        while time.time() < deadline and not arrived:
            frame = json.loads(ws.recv(timeout=max(0.1, deadline - time.time())))
            arrived = "across the cluster" in json.dumps(frame)
        check(arrived, "the message did not arrive on B's socket within 5 s")
    passed("a chat message sent through A arrives live on a socket held by B")

    # 3b. A resumable upload through haproxy: every chunk, each on a connection of its own, reaches
    # the instance that holds the upload's file (stickiness on the creation's Location).
    with open(c.clip, "rb") as f:
        clip = f.read()
    tus = {"Authorization": f"Bearer {ana['token']}", "Tus-Resumable": "1.0.0"}
    created = requests.post(c.lb("/v1/uploads"), timeout=15, headers={
        **tus, "Upload-Length": str(len(clip)),
        "Upload-Metadata": "city " + base64.b64encode(CITY.encode()).decode()})
    check(created.status_code == 201, f"tus creation: {created.status_code} {created.text}")
    location = created.headers["Location"]
    step = len(clip) // 6 + 1
    for offset in range(0, len(clip), step):
        sent = requests.patch(c.lb(location), data=clip[offset:offset + step], timeout=30, headers={
            **tus, "Upload-Offset": str(offset), "Content-Type": "application/offset+octet-stream",
            "Connection": "close"})
        check(sent.status_code == 204, f"tus chunk at {offset}: {sent.status_code} {sent.text}")
    post_id = requests.head(c.lb(location), headers=tus, timeout=15).headers.get("Tonight-Post-Id")
    check(post_id and c.call("GET", c.lb(f"/v1/posts/{post_id}"), ana["token"]).status_code == 200,
          f"the finished upload made no post ({post_id!r})")
    passed("a resumable upload sent in six chunks through haproxy ends as a post")

    # 5. 100 concurrent voters spread over both: exact counters.
    author = c.member("author")
    post = c.psql(
        "INSERT INTO posts (id, author_id, city_key, caption, status, media_kind, original_key, original_type,"
        " created_at, updated_at) SELECT 'clusterpost', id, 'Halifax$Nova Scotia$CA', 'hot', 'ready', 'image',"
        " 'posts/clusterpost/original.jpg', 'image/jpeg', 1, 1 FROM users WHERE username = 'author' RETURNING id")
    check(post == "clusterpost", f"post insert: {post!r}")
    voters = [c.member(f"voter{i}") for i in range(100)]
    with ThreadPoolExecutor(max_workers=50) as pool:
        statuses = list(pool.map(
            lambda i: c.call("PUT", c.direct("ab"[i % 2], f"/v1/posts/{post}/vote"), voters[i]["token"],
                             {"value": 1}).status_code, range(100)))
    check(all(s == 200 for s in statuses), f"vote statuses {sorted(set(statuses))}")
    up = c.psql(f"SELECT up_count FROM posts WHERE id = '{post}'")
    check(up == "100", f"up_count {up} after 100 votes")
    passed("100 voters racing over both instances leave up_count exactly 100")

    # 6. A vote on one is visible in the other's cached feed within a second.
    def first_up(name):
        items = c.call("GET", c.direct(name, f"/v1/cities/{CITY}/posts")).json()["items"]
        return next(item["up"] for item in items if item["id"] == post)

    for _ in range(3):
        check(first_up("b") == 100, "B's feed before the vote")
    c.call("PUT", c.direct("a", f"/v1/posts/{post}/vote"), ana["token"], {"value": 1}).raise_for_status()
    started = time.time()
    while first_up("b") != 101:
        check(time.time() - started < 1.0, "B's cached feed did not show A's vote within 1 s")
        time.sleep(0.02)
    passed(f"a vote through A shows in B's cached feed after {int((time.time() - started) * 1000)} ms")

    # 7. A ban on one refuses the member on the other within a second.
    subprocess.run([c.args.bin, "admin", "create-user", "--username", "boss", "--email", "boss@example.com",
                    "--password", "a long enough passphrase", "--role", "admin"],
                   env=c.env("a"), check=True, capture_output=True)
    boss = c.call("POST", c.direct("a", "/v1/auth/login"), body={
        "username": "boss", "password": "a long enough passphrase"})
    check(boss.status_code == 200, f"admin login: {boss.status_code} {boss.text}")
    boss_token = boss.json()["accessToken"]
    cal = c.member("cal")
    check(c.call("GET", c.direct("b", "/v1/me"), cal["token"]).status_code == 200, "cal before the ban")
    banned = c.call("PUT", c.direct("a", f"/v1/moderation/users/{cal['id']}/ban"), boss_token)
    check(banned.status_code == 204, f"ban: {banned.status_code} {banned.text}")
    started = time.time()
    while c.call("GET", c.direct("b", "/v1/me"), cal["token"]).status_code == 200:
        check(time.time() - started < 1.0, "B still accepted a banned member's token after 1 s")
        time.sleep(0.02)
    passed("a ban through A refuses the member on B within 1 s")

    # 8. A sign-up limit holds across both (150 an hour from one address, counted by the cluster).
    accepted = 1 + 1 + 1 + 100 + 1  # ana, ben, author, voters, cal
    refused = 0
    for i in range(80):
        status = c.sign_up(f"late{i}").status_code
        if status in (200, 201):
            accepted += 1
        elif status == 429:
            refused += 1
        else:
            raise Failed(f"sign-up answered {status}")
    check(accepted == 150 and refused == 34, f"{accepted} sign-ups accepted, {refused} refused (limit 150)")
    passed("the sign-up limit (150 an hour) holds across both instances: 150 accepted, then 429")

    # 9. A scheduled job runs once: an upload's media job, with workers on both instances.
    photo_path = os.path.join(c.work, "photo.jpg")
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=320x240", "-frames:v", "1",
                    photo_path], check=True)
    with open(photo_path, "rb") as f:
        photo = f.read()
    uploaded = requests.post(
        c.lb("/v1/posts"), headers={"Authorization": f"Bearer {ana['token']}"}, timeout=30,
        files={"media": ("photo.jpg", photo, "image/jpeg")}, data={"city": "Halifax$Nova Scotia$CA"})
    check(uploaded.status_code in (200, 201, 202), f"upload: {uploaded.status_code} {uploaded.text}")
    upload_id = uploaded.json()["id"]
    deadline = time.time() + 60
    while c.psql(f"SELECT status FROM posts WHERE id = '{upload_id}'") != "ready":
        check(time.time() < deadline, "the upload was not processed within 60 s")
        time.sleep(0.2)
    time.sleep(1)
    runs = 0
    for name in "ab":
        with open(os.path.join(c.work, f"{name}.log"), errors="replace") as log:
            runs += sum(1 for line in log if "media processed" in line and upload_id in line)
    check(runs == 1, f"the media job ran {runs} times")
    passed("the upload's media job ran exactly once with workers on both instances")

    # 3. pg_terminate_backend of every backend, repeatedly, under vote load.
    stop = threading.Event()
    outcomes = {"ok": 0, "503": 0, "other": []}

    def vote_loop(i):
        while not stop.is_set():
            try:
                status = c.call("PUT", c.lb(f"/v1/posts/{post}/vote"), voters[i]["token"],
                                {"value": 1 if int(time.time() * 10) % 2 else -1}).status_code
            except requests.RequestException as error:
                outcomes["other"].append(str(error))
                continue
            if status == 200:
                outcomes["ok"] += 1
            elif status == 503:
                outcomes["503"] += 1
            else:
                outcomes["other"].append(status)

    threads = [threading.Thread(target=vote_loop, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for _ in range(5):
        time.sleep(0.7)
        c.psql("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
               " WHERE datname = current_database() AND pid <> pg_backend_pid()")
    time.sleep(0.5)
    stop.set()
    for t in threads:
        t.join()
    check(not outcomes["other"], f"votes during terminations answered {outcomes['other'][:5]}")
    for name in "ab":
        started = time.time()
        while c.call("PUT", c.direct(name, f"/v1/posts/{post}/vote"), ana["token"], {"value": 1}).status_code != 200:
            check(time.time() - started < 10, f"instance {name} did not answer votes within 10 s of the terminations")
            time.sleep(0.2)
    passed(f"5 rounds of pg_terminate_backend under vote load ({outcomes['ok']} ok, {outcomes['503']} 503): "
           "both instances answer votes again at once")

    # 11. A PostgreSQL restart is ridden out: 503 with Retry-After during it, nothing else.
    during = []
    stop.clear()

    def me_loop():
        while not stop.is_set():
            try:
                response = c.call("GET", c.lb("/v1/me"), ana["token"], timeout=20)
                during.append((response.status_code, response.headers.get("Retry-After")))
            except requests.RequestException as error:
                during.append((str(error), None))
            time.sleep(0.05)

    reader = threading.Thread(target=me_loop)
    reader.start()
    time.sleep(0.3)
    # Not captured: the restarted server would hold the pipe open.
    subprocess.run(c.args.pg_restart, shell=True, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, timeout=90)
    restarted = time.time()
    time.sleep(3)
    stop.set()
    reader.join()
    bad = [d for d in during if d[0] not in (200, 503) or (d[0] == 503 and not d[1])]
    check(not bad, f"during the restart: {bad[:5]}")
    for name in "ab":
        started = time.time()
        while c.call("GET", c.direct(name, "/v1/me"), ana["token"]).status_code != 200:
            check(time.time() - started < 10, f"instance {name} did not serve again after the restart")
            time.sleep(0.2)
    after = [c.call("GET", c.lb("/v1/me"), ana["token"]).status_code for _ in range(20)]
    check(all(s == 200 for s in after), f"after the restart: {after}")
    passed(f"a PostgreSQL restart: {sum(1 for d in during if d[0] == 503)} answers 503 with Retry-After,"
           f" the rest 200, all 200 after ({len(during)} requests)")

    # 10. kill -9 of one instance loses no acknowledged write; its sockets' users resync elsewhere.
    acknowledged = []
    stop.clear()

    def writer(i):
        n = 0
        while not stop.is_set():
            n += 1
            text = f"w{i}-{n}"
            try:
                response = c.call("POST", c.lb(f"/v1/conversations/{conversation}/messages"), ana["token"],
                                  {"text": text}, timeout=10)
            except requests.RequestException:
                continue
            if response.status_code in (200, 201):
                acknowledged.append(text)

    sockets_on_a = c.sockets.enter_context(
        ws_connect(f"ws://127.0.0.1:{c.ports['a']}/v1/live?token={ben['token']}", open_timeout=10))
    check(json.loads(sockets_on_a.recv(timeout=10)).get("type") == "ready", "no ready on A's socket")
    writers = [threading.Thread(target=writer, args=(i,)) for i in range(4)]
    for t in writers:
        t.start()
    time.sleep(1)
    c.procs["a"].send_signal(signal.SIGKILL)
    c.procs["a"].wait()
    time.sleep(1.5)
    stop.set()
    for t in writers:
        t.join()
    stored = set(c.psql(
        f"SELECT string_agg(text, ',') FROM messages WHERE conversation_id = '{conversation}'").split(","))
    lost = [t for t in acknowledged if t not in stored]
    check(acknowledged and not lost, f"{len(lost)} of {len(acknowledged)} acknowledged messages lost: {lost[:5]}")
    closed = False
    deadline = time.time() + 5
    while not closed and time.time() < deadline:
        try:
            sockets_on_a.recv(timeout=max(0.1, deadline - time.time()))
        except TimeoutError:
            break
        except Exception:  # the connection ended
            closed = True
    check(closed, "A's socket stayed open after kill -9")
    with ws_connect(f"ws://127.0.0.1:{c.lb_port}/v1/live?token={ben['token']}", open_timeout=10) as ws:
        check(json.loads(ws.recv(timeout=10)).get("type") == "ready", "no ready on the socket through haproxy")
    synced = c.call("GET", c.lb(f"/v1/conversations/{conversation}/messages?since=0&limit=100"), ben["token"])
    check(synced.status_code == 200, f"resync: {synced.status_code} {synced.text}")
    passed(f"kill -9 of A: none of {len(acknowledged)} acknowledged messages lost; its socket's user"
           " reconnects through haproxy and syncs")

    # 4. SIGTERM stops an instance within 10 s whatever it is waiting on (here a query blocked
    # behind a lock that is never released).
    locker = subprocess.Popen([c.args.psql, c.args.pg_url, "-q"], stdin=subprocess.PIPE, text=True)
    locker.stdin.write("BEGIN; LOCK TABLE users IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(60);\n")
    locker.stdin.flush()
    time.sleep(0.5)
    def stuck_request():
        try:
            requests.get(c.direct("b", "/v1/me"), headers={"Authorization": f"Bearer {ben['token']}"}, timeout=60)
        except requests.RequestException:
            pass  # the server went away, as it should

    stuck = threading.Thread(target=stuck_request)
    stuck.daemon = True
    stuck.start()
    time.sleep(0.5)
    started = time.time()
    c.procs["b"].send_signal(signal.SIGTERM)
    try:
        c.procs["b"].wait(timeout=10)
    except subprocess.TimeoutExpired:
        raise Failed("B was still running 10 s after SIGTERM")
    finally:
        locker.kill()
        c.psql("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
               " WHERE query LIKE '%pg_sleep(60)%' AND pid <> pg_backend_pid()")
    passed(f"SIGTERM with a request stuck on a lock: B stopped in {time.time() - started:.1f} s")

    # 5. Backups (docs/operations.md): pg_dump of the live database, restored into a new one that
    # a new instance serves; and the SQLite pair, `tonight backup` under a running server and
    # `tonight restore` after it stopped.
    tools = os.path.dirname(c.args.psql)
    dump = os.path.join(c.work, "tonight.dump")
    up = c.psql(f"SELECT up_count FROM posts WHERE id = '{post}'")
    subprocess.run([os.path.join(tools, "pg_dump"), "--format=custom", f"--file={dump}", c.args.pg_url],
                   check=True, timeout=120)
    c.psql("DROP DATABASE IF EXISTS tonight_restored")
    c.psql("CREATE DATABASE tonight_restored")
    restored_url = c.args.pg_url.rsplit("/", 1)[0] + "/tonight_restored"
    subprocess.run([os.path.join(tools, "pg_restore"), "--no-owner", f"--dbname={restored_url}", dump],
                   check=True, timeout=120)
    c.ports["r"] = free_port()
    c.start("r", {"DATABASE_URL": restored_url})
    me = c.call("GET", c.direct("r", "/v1/me"), ben["token"])
    check(me.status_code == 200, f"ben's token on the restored database: {me.status_code} {me.text}")
    restored_post = c.call("GET", c.direct("r", f"/v1/posts/{post}")).json()
    check(str(restored_post.get("up")) == up, f"restored post has {restored_post.get('up')} up, the dump {up}")
    passed(f"pg_dump of the live database restores into one a new instance serves ({os.path.getsize(dump)} bytes)")

    c.ports["s"] = free_port()
    sqlite = {"DATABASE_URL": "", "MEDIA_STORAGE": "local"}
    c.start("s", sqlite)
    kept = c.member("kept", c.direct("s", "/v1/auth/signup"))
    backup = os.path.join(c.work, "s-backup.sqlite")
    data = os.path.join(c.work, "s")
    subprocess.run([c.args.bin, "backup", backup, "--data-dir", data], check=True, timeout=120,
                   env=c.env("s", sqlite))
    c.member("later", c.direct("s", "/v1/auth/signup"))
    c.procs["s"].send_signal(signal.SIGTERM)
    c.procs["s"].wait(timeout=15)
    subprocess.run([c.args.bin, "restore", backup, "--data-dir", data], check=True, timeout=120,
                   env=c.env("s", sqlite))
    c.start("s", sqlite)
    check(c.call("GET", c.direct("s", "/v1/me"), kept["token"]).status_code == 200, "kept's token after the restore")
    check(c.sign_up("later", c.direct("s", "/v1/auth/signup")).status_code in (200, 201),
          "a member made after the backup was still there after the restore")
    passed("tonight backup under a running SQLite server, then tonight restore once it stopped: the backup's state")
    return results


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--pg-url", required=True)
    parser.add_argument("--pg-restart", required=True)
    parser.add_argument("--psql", default="psql")
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    cluster = Cluster(args)
    started = time.time()
    try:
        cluster.start_s3()
        cluster.start("a")  # migrates first
        cluster.start("b")
        cluster.start_haproxy()
        run_checks(cluster)
    except Failed as failure:
        print(f"  FAILED  {failure}", flush=True)
        for name in ("a", "b"):
            path = os.path.join(args.work, f"{name}.log")
            if os.path.exists(path):
                print(f"--- last lines of {name}.log ---")
                with open(path, errors="replace") as f:
                    print("".join(f.readlines()[-30:]))
        sys.exit(1)
    finally:
        cluster.stop_all()
    print(f"cluster: all checks passed in {time.time() - started:.0f} s")


if __name__ == "__main__":
    main()
