#!/usr/bin/env python3
"""Live chat load: N open sockets, messages between random pairs, delivery latency.

  chat_load.py tonight --url URL [--socket-url URL2] --sockets N --pairs P --seconds S --senders C
  chat_load.py relay   --url ws://HOST:PORT --sockets N --pairs P --seconds S --senders C

tonight: signs up N users, befriends P pairs and opens their conversations, connects one /v1/live
socket per user (to --socket-url when given: another instance on the same database), then C
senders POST messages to random pairs for S seconds; the latency of a message is from just before
its POST to its arrival on the recipient's socket.
relay: the baseline, bench/relay_server.py — the same sockets and pairs, each message sent on the
sender's socket and forwarded by the relay to the recipient's.
posts: the floor of the HTTP half — the same senders POST the same bodies to a message route with no
token, which Tonight answers 401 before any work; no sockets. No chat message can cost less.
flood: flat out without this client's limits — wrk (bench/messages.lua) posts on --connections
connections while the same sockets count arrivals; with --anonymous, its POSTs carry no token (the
floor of a posted message, as wrk can send them).
Prints one JSON line: sockets, messages, seconds, per_second, p50_ms, p99_ms, lost.
"""
import argparse, asyncio, json, os, random, statistics, sys, time, uuid

import aiohttp
import websockets


def percentile(values, q):
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def gather_limited(coroutines, limit=32):
    semaphore = asyncio.Semaphore(limit)

    async def run(c):
        async with semaphore:
            return await c

    return await asyncio.gather(*(run(c) for c in coroutines))


class Receiver:
    """Matches arrivals to sends. Senders are closed-loop: each waits for its message to arrive
    (at most 5 s, else it counts as lost) before sending the next, in both modes."""

    def __init__(self):
        self.sent = {}
        self.latencies = []

    def expect(self, key):
        arrived = asyncio.get_running_loop().create_future()
        self.sent[key] = (time.perf_counter(), arrived)
        return arrived

    def arrived(self, key):
        entry = self.sent.pop(key, None)
        if entry is not None:
            self.latencies.append((time.perf_counter() - entry[0]) * 1000)
            if not entry[1].done():
                entry[1].set_result(None)


async def wait(arrived):
    try:
        await asyncio.wait_for(arrived, 5)
    except asyncio.TimeoutError:
        pass


async def listen(ws, receiver, kind):
    async for raw in ws:
        try:
            message = json.loads(raw)
        except ValueError:
            continue
        if kind == "tonight":
            if message.get("type") == "message":
                receiver.arrived(message["data"]["message"]["text"])
        else:
            receiver.arrived(message.get("text"))


async def members(args, http):
    """Signs up the members, befriends the pairs and opens their conversations, and connects a
    /v1/live socket per member: (users, pairs, conversations, sockets)."""
    base = args.url.rstrip("/")
    socket_base = (args.socket_url or args.url).rstrip("/").replace("http://", "ws://")
    run = uuid.uuid4().hex[:6]

    async def signup(i):
        body = {"username": f"c{run}{i}", "email": f"c{run}{i}@example.com", "password": "bench passphrase, long enough"}
        async with http.post(f"{base}/v1/auth/signup", json=body) as r:
            data = await r.json()
            if r.status != 201:
                raise SystemExit(f"signup failed: {r.status} {data}")
            return data["user"]["id"], data["accessToken"]

    users = await gather_limited([signup(i) for i in range(args.sockets)])

    async def befriend(a, b):
        (aid, atok), (bid, btok) = users[a], users[b]
        async with http.post(f"{base}/v1/me/friend-requests", json={"userId": bid}, headers={"Authorization": f"Bearer {atok}"}) as r:
            await r.read()
        async with http.post(f"{base}/v1/me/friend-requests/{aid}/accept", headers={"Authorization": f"Bearer {btok}"}) as r:
            await r.read()
        async with http.post(f"{base}/v1/conversations", json={"userId": bid}, headers={"Authorization": f"Bearer {atok}"}) as r:
            return (await r.json())["id"]

    pairs = [(2 * i, 2 * i + 1) for i in range(min(args.pairs, args.sockets // 2))]
    conversations = await gather_limited([befriend(a, b) for a, b in pairs])

    async def connect(i):
        ws = await websockets.connect(f"{socket_base}/v1/live?token={users[i][1]}", max_size=1 << 20, open_timeout=60)
        ready = json.loads(await ws.recv())
        assert ready["type"] == "ready", ready
        return ws

    sockets = await gather_limited([connect(i) for i in range(args.sockets)], limit=64)
    return users, pairs, conversations, sockets


async def tonight(args):
    base = args.url.rstrip("/")
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=64)) as http:
        users, pairs, conversations, connections = await members(args, http)
        receiver = Receiver()
        readers = [asyncio.create_task(listen(ws, receiver, "tonight")) for ws in connections]
        await asyncio.sleep(1)
        rss = read_rss(args.pid)
        sent = 0

        async def one():
            nonlocal sent
            index = random.randrange(len(pairs))
            token = users[pairs[index][random.randrange(2)]][1]
            key = uuid.uuid4().hex
            arrived = receiver.expect(key)
            sent += 1
            async with http.post(f"{base}/v1/conversations/{conversations[index]}/messages", json={"text": key},
                                 headers={"Authorization": f"Bearer {token}"}) as r:
                await r.read()
            await wait(arrived)

        elapsed = await drive(one, args)
        await asyncio.sleep(1)
        report(args, receiver, sent, elapsed, rss)
        for task in readers:
            task.cancel()
        for ws in connections:
            await ws.close()


class Arrivals:
    """Counts each message once, on whichever of its members' sockets it arrives first."""

    def __init__(self):
        self.seen = set()

    def arrived(self, key):
        self.seen.add(key)


async def flood(args):
    """wrk (bench/messages.lua) posts messages flat out on --connections connections while the
    sockets count what arrives; the latencies are the POSTs' (stored and answered), as wrk sees
    them. With --anonymous, the same POSTs carry no token: the HTTP floor, no sockets."""
    pairs_file = args.pairs_file
    if args.anonymous:
        with open(pairs_file, "w") as out:
            out.writelines(f"none {uuid.uuid4()}\n" for _ in range(args.pairs))
        result = await run_wrk(args, pairs_file, "anonymous")
        report_wrk(args, result, result["requests"], result["requests"], 0)
        return
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=64)) as http:
        users, pairs, conversations, connections = await members(args, http)
    lines = [f"{users[member][1]} {conversation}" for pair, conversation in zip(pairs, conversations) for member in pair]
    random.shuffle(lines)
    with open(pairs_file, "w") as out:
        out.write("\n".join(lines) + "\n")
    arrivals = Arrivals()
    readers = [asyncio.create_task(listen(ws, arrivals, "tonight")) for ws in connections]
    await asyncio.sleep(1)
    rss = read_rss(args.pid)
    result = await run_wrk(args, pairs_file)
    stored = result["requests"] - result["status_errors"]
    for _ in range(50):  # what is still on its way, for at most 5 s
        if len(arrivals.seen) >= stored:
            break
        await asyncio.sleep(0.1)
    report_wrk(args, result, stored, len(arrivals.seen), rss)
    for task in readers:
        task.cancel()
    for ws in connections:
        await ws.close()


async def run_wrk(args, pairs_file, *extra):
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "messages.lua")
    process = await asyncio.create_subprocess_exec(
        "wrk", "-t2", f"-c{args.connections}", f"-d{max(1, round(args.seconds))}s", "--timeout", "10s", "-s", script,
        args.url.rstrip("/"), "--", pairs_file, *extra, stdout=asyncio.subprocess.PIPE)
    output, _ = await process.communicate()
    for line in output.decode().splitlines():
        if line.startswith("{"):
            return json.loads(line)
    raise SystemExit(f"wrk printed no result: {output.decode()}")


def report_wrk(args, result, sent, delivered, rss):
    # Anonymous posts are all answered 401 by design: only the sockets' errors count.
    errors = result["socket_errors"] + (0 if args.anonymous else result["status_errors"])
    print(json.dumps({
        "mode": "anonymous posts" if args.anonymous else "flood", "sockets": 0 if args.anonymous else args.sockets,
        "connections": args.connections, "messages": delivered, "sent": sent, "seconds": result["seconds"],
        "per_second": round(delivered / result["seconds"], 1), "p50_ms": result["p50_ms"], "p99_ms": result["p99_ms"],
        # Requests still under way when wrk stopped are stored and delivered but not counted as sent.
        "lost": max(0, sent - delivered), "errors": errors, "server_rss_mb": rss,
    }))


async def drive(one, args):
    """Runs `one()` — send a message and wait for its arrival — at a steady rate (open loop) or
    from closed-loop senders back to back; returns the seconds it took."""
    started = time.perf_counter()
    if args.rate > 0:
        await paced(one, args.rate, args.seconds)
    else:
        deadline = started + args.seconds

        async def sender():
            while time.perf_counter() < deadline:
                await one()

        await asyncio.gather(*(sender() for _ in range(args.senders)))
    return time.perf_counter() - started


async def paced(one, rate, seconds):
    """Starts `one()` every 1/rate seconds for `seconds`, without waiting for earlier ones."""
    tasks = []
    started = time.perf_counter()
    count = int(rate * seconds)
    for i in range(count):
        delay = started + i / rate - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.create_task(one()))
    await asyncio.gather(*tasks)


async def relay(args):
    base = args.url.rstrip("/")
    receiver = Receiver()

    async def connect(i):
        ws = await websockets.connect(f"{base}/?user={i}", max_size=1 << 20, open_timeout=60)
        return ws

    connections = await gather_limited([connect(i) for i in range(args.sockets)], limit=64)
    readers = [asyncio.create_task(listen(ws, receiver, "relay")) for ws in connections]
    rss = read_rss(args.pid)
    pairs = [(2 * i, 2 * i + 1) for i in range(min(args.pairs, args.sockets // 2))]
    sent = 0

    async def one():
        nonlocal sent
        a, b = random.choice(pairs)
        if random.randrange(2):
            a, b = b, a
        key = uuid.uuid4().hex
        arrived = receiver.expect(key)
        sent += 1
        await connections[a].send(json.dumps({"to": b, "text": key}))
        await wait(arrived)

    elapsed = await drive(one, args)
    await asyncio.sleep(1)
    report(args, receiver, sent, elapsed, rss)
    for task in readers:
        task.cancel()
    for ws in connections:
        await ws.close()


async def posts(args):
    """Closed-loop POSTs answered at once; the latency of each is its request's."""
    base = args.url.rstrip("/")
    receiver = Receiver()
    rss = read_rss(args.pid)
    sent = 0
    async with aiohttp.ClientSession() as http:
        async def one():
            nonlocal sent
            key = uuid.uuid4().hex
            receiver.expect(key)
            sent += 1
            async with http.post(f"{base}/v1/conversations/{key}/messages", json={"text": key}) as r:
                await r.read()
            receiver.arrived(key)

        elapsed = await drive(one, args)
    report(args, receiver, sent, elapsed, rss)


def read_rss(pid):
    if not pid:
        return 0
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) // 1024
    return 0


def report(args, receiver, sent, elapsed, rss):
    values = receiver.latencies
    print(json.dumps({
        "mode": args.mode, "sockets": args.sockets, "rate": args.rate, "messages": len(values), "sent": sent,
        "seconds": round(elapsed, 2), "per_second": round(len(values) / elapsed, 1),
        "p50_ms": round(percentile(values, 0.50), 2), "p99_ms": round(percentile(values, 0.99), 2),
        "mean_ms": round(statistics.fmean(values), 2) if values else 0, "lost": sent - len(values),
        "server_rss_mb": rss,
    }))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["tonight", "relay", "posts", "flood"])
    parser.add_argument("--url", required=True)
    parser.add_argument("--socket-url")
    parser.add_argument("--sockets", type=int, default=1000)
    parser.add_argument("--pairs", type=int, default=500)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--senders", type=int, default=8)
    parser.add_argument("--pid", type=int, default=0)
    parser.add_argument("--rate", type=float, default=0,
                        help="open loop: start this many messages a second (each still timed to its arrival) instead of closed-loop senders")
    parser.add_argument("--connections", type=int, default=64, help="flood: wrk's connections")
    parser.add_argument("--pairs-file", default="/tmp/chat-pairs.txt", help="flood: where wrk reads tokens and conversations")
    parser.add_argument("--anonymous", action="store_true", help="flood: POSTs with no token, answered 401 (the floor)")
    args = parser.parse_args()
    asyncio.run({"tonight": tonight, "relay": relay, "posts": posts, "flood": flood}[args.mode](args))


if __name__ == "__main__":
    main()
