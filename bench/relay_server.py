#!/usr/bin/env python3
"""The chat benchmark's baseline: a websockets relay. A client connects with ?user=ID and sends
{"to": ID, "text": …}; the relay forwards it to every socket of that user. Nothing is stored.

  relay_server.py PORT
"""
import asyncio, json, sys
from urllib.parse import parse_qs, urlparse

import websockets

sockets = {}


async def handle(ws):
    user = parse_qs(urlparse(ws.request.path).query).get("user", [""])[0]
    sockets.setdefault(user, set()).add(ws)
    try:
        async for raw in ws:
            message = json.loads(raw)
            for target in list(sockets.get(str(message["to"]), ())):
                await target.send(raw)
    finally:
        sockets[user].discard(ws)


async def main(port):
    async with websockets.serve(handle, "127.0.0.1", port, max_size=1 << 20):
        await asyncio.Future()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1])))
