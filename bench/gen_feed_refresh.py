#!/usr/bin/env python3
"""The next hour's version of a feed made by gen_feed.py: the same file with a few events changed,
dropped and added, as a ticket feed's hourly refresh would be.

  gen_feed_refresh.py FEED OUT [--changed 0.02] [--dropped 0.01] [--added 0.01] [--seed 2017]

Of the changed events, a fifth each get a new date, start time, venue, price or are cancelled; a
price is not a place, start or status change, so those events are updated without a change record. Prints what it
did as JSON: changed, changes (the events whose place, start or status changed, which the import
should count as changed), dropped, added.
"""
import argparse
import json
import random
import re
import sys

DATE = re.compile(r"<date>2015-(\d\d)-(\d\d)</date>")
TIME = re.compile(r"<time>(\d\d):(\d\d)</time>")
VENUE = re.compile(r"<venue_id>([^<]*)</venue_id>")
PRICE = re.compile(r"<min_price>(\d+)\.")
STATUS = re.compile(r"<status>([a-z]*)</status>")
ID = re.compile(r"<id>([0-9A-F]{16})</id>")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("feed")
    parser.add_argument("out")
    parser.add_argument("--changed", type=float, default=0.02)
    parser.add_argument("--dropped", type=float, default=0.01)
    parser.add_argument("--added", type=float, default=0.01)
    parser.add_argument("--seed", type=int, default=2017)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    venues = []
    counts = {"changed": 0, "changes": 0, "dropped": 0, "added": 0}
    with open(args.feed, encoding="utf-8") as src, open(args.out, "w", encoding="utf-8", buffering=1 << 20) as out:
        for line in src:
            if line.startswith("    <venue>"):
                venues.append(re.search(r"<id>([^<]*)</id>", line).group(1))
            if not line.startswith("    <event>"):
                out.write(line)
                continue
            roll = rng.random()
            if roll < args.dropped:
                counts["dropped"] += 1
                continue
            if roll < args.dropped + args.changed:
                line = change(line, rng, venues, counts)
            out.write(line)
            if rng.random() < args.added:
                counts["added"] += 1
                out.write(ID.sub(lambda m: f"<id>{rng.getrandbits(64):016X}</id>", line, count=1))
    json.dump(counts, sys.stdout)
    print()


def change(line, rng, venues, counts):
    """One field of an event changed; counts what the import should find."""
    kind = rng.choice(("date", "time", "venue", "price", "cancel"))
    if kind == "time" and not TIME.search(line):
        kind = "date"
    if kind == "price" and not PRICE.search(line):
        kind = "date"
    if kind == "cancel" and STATUS.search(line).group(1) == "cancelled":
        kind = "date"
    if kind == "date":
        month, day = DATE.search(line).groups()
        new_day = (int(day) % 28) + 1
        line = DATE.sub(f"<date>2015-{month}-{new_day:02d}</date>", line, count=1)
    elif kind == "time":
        hour, minute = TIME.search(line).groups()
        line = TIME.sub(f"<time>{(int(hour) + 1) % 24:02d}:{minute}</time>", line, count=1)
    elif kind == "venue":
        old = VENUE.search(line).group(1)
        new = rng.choice(venues)
        while new == old:
            new = rng.choice(venues)
        line = VENUE.sub(f"<venue_id>{new}</venue_id>", line, count=1)
    elif kind == "cancel":
        line = STATUS.sub("<status>cancelled</status>", line, count=1)
    else:
        low = int(PRICE.search(line).group(1))
        line = PRICE.sub(f"<min_price>{low + 1}.", line, count=1)
    counts["changed"] += 1
    if kind != "price":
        counts["changes"] += 1
    return line


if __name__ == "__main__":
    main()
