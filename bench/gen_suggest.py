#!/usr/bin/env python3
"""Writes a deterministic list of artist-suggest request paths for wrk (bench/paths.lua): prefixes of 1–6
letters of words of the artist names bench/gen_feed.py generates with the same --artists and --seed, as a
user types them (lower or capitalised, accents kept, URL-encoded).

    python3 bench/gen_suggest.py OUT.txt [--artists N] [--seed S] [--count K]

Words that are only digits (the generator's serial numbers) are skipped: people type names.
"""

import argparse
import os
import random
import sys
from urllib.parse import quote

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_feed import artist_names  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("output")
    parser.add_argument("--artists", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=2015)
    parser.add_argument("--count", type=int, default=2000)
    args = parser.parse_args()
    names = artist_names(random.Random(args.seed), max(1, args.artists))
    rng = random.Random(args.seed + 11)
    with open(args.output, "w", encoding="utf-8", newline="\n") as f:
        written = 0
        while written < args.count:
            words = [w.strip('",&') for w in rng.choice(names).split()]
            words = [w for w in words if w and any(c.isalpha() for c in w)]
            if not words:
                continue
            word = rng.choice(words)
            prefix = word[: rng.randint(1, min(6, len(word)))]
            if rng.random() < 0.5:
                prefix = prefix.lower()
            f.write(f"/v1/artists/suggest?q={quote(prefix, safe='')}\n")
            written += 1
    print(f"{args.output} {os.path.getsize(args.output)}")


if __name__ == "__main__":
    main()
