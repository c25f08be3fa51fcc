#!/usr/bin/env python3
"""A map tile server for the browser tests: `tiles.py PORT` answers GET /{z}/{x}/{y}.png with a
256 px PNG (a colour from the tile's numbers, a grid line at its edges), anything else with 404.
scripts/test points the web server's `MAP_TILE_URL` at it, so the sessions map loads real tiles."""
import re
import struct
import sys
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def tile(z, x, y):
    colour = bytes(((40 + 23 * x) % 120, (40 + 31 * y) % 120, (60 + 17 * z) % 140))
    edge = bytes((90, 90, 110))
    row = b"\0" + edge + colour * 254 + edge
    raw = b"\0" + edge * 256 + row * 254 + b"\0" + edge * 256

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", 256, 256, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


class Tiles(BaseHTTPRequestHandler):
    def do_GET(self):
        match = re.fullmatch(r"/(\d+)/(\d+)/(\d+)\.png", self.path)
        if not match:
            self.send_error(404)
            return
        body = tile(*map(int, match.groups()))
        self.send_response(200)
        self.send_header("Content-Type", "image/png")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Tiles).serve_forever()
