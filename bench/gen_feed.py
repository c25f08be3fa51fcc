#!/usr/bin/env python3
"""Writes a deterministic synthetic event feed in the FORMATS.md layout (and optionally an artist
affinity file), for import benchmarks and tests.

    python3 bench/gen_feed.py OUT.xml [--artists N] [--venues N] [--events N] [--seed S]
                                      [--affinity OUT.txt]

Defaults (100k artists, 20k venues, 220k events, one record per line) give a feed of about 120 MB and
an affinity file of about 11 MB. Prints only the paths written and their sizes.
"""

import argparse
import os
import random
from xml.sax.saxutils import escape

WORDS = ["Night", "Black", "Velvet", "Electric", "Silver", "Midnight", "Golden", "Neon", "Wild", "Crystal",
         "Echo", "Lunar", "Saint", "Iron", "Paper", "Ghost", "Royal", "Broken", "Rose", "Thunder", "Ocean",
         "Desert", "Static", "Hollow", "Amber", "Atlas", "Cobalt", "Dream", "Fever", "Harbor"]
NOUNS = ["Kings", "Riders", "Hearts", "Wolves", "Lights", "Machines", "Sisters", "Brothers", "Tigers",
         "Parade", "Collective", "Orchestra", "Quartet", "Club", "Society", "Engine", "Garden", "Army"]
ACCENTED = ["Sigur Rós", "Björk", "Mötley Crüe", "Beyoncé", "Zoë Keating", "Ólafur Arnalds", "Café Tacvba",
            "Jóhann Jóhannsson", "Sébastien Tellier", "Måneskin", "東京事変", "Ёлка", "Ναταλία", "Dvořák Trio",
            "Łona", "Çağan Şengül", "Ñu", "Mariza ♫", "Émilie Simon", "Ryūichi Sakamoto"]
CITIES = [  # name, state, country, lat, lon
    ("Los Angeles", "CA", "US", 34.05, -118.24), ("New York", "NY", "US", 40.71, -74.0),
    ("Chicago", "IL", "US", 41.88, -87.63), ("Austin", "TX", "US", 30.27, -97.74),
    ("Seattle", "WA", "US", 47.61, -122.33), ("Miami", "FL", "US", 25.76, -80.19),
    ("Toronto", "ON", "CA", 43.65, -79.38), ("Vancouver", "BC", "CA", 49.28, -123.12),
    ("Mexico City", "CMX", "MX", 19.43, -99.13), ("London", "", "GB", 51.51, -0.13),
    ("Paris", "", "FR", 48.86, 2.35), ("Berlin", "", "DE", 52.52, 13.40),
    ("Reykjavík", "", "IS", 64.15, -21.94), ("São Paulo", "SP", "BR", -23.55, -46.63),
    ("Sydney", "NSW", "AU", -33.87, 151.21), ("Auckland", "", "NZ", -36.85, 174.76),
    ("Tokyo", "", "JP", 35.68, 139.69), ("Suva", "", "FJ", -18.14, 178.44),
    ("Anchorage", "AK", "US", 61.22, -149.90), ("Cape Town", "", "ZA", -33.92, 18.42),
]
STREETS = ["Main St", "Wilshire Blvd", "Broadway", "Sunset Blvd", "Market St", "High St", "Rue de Rivoli",
           "Karl-Marx-Allee", "King St", "Queen St", "Avenida Paulista", "George St", "Ocean Dr"]
STATUSES = ["onsale"] * 80 + ["offsale"] * 8 + ["cancelled"] * 4 + ["postponed"] * 4 + ["rescheduled"] * 4
CURRENCIES = ["USD"] * 85 + ["EUR", "GBP", "CAD", "AUD", "JPY"] * 3


def artist_names(rng, n):
    names = []
    for i in range(n):
        r = rng.random()
        if r < 0.04:
            name = f"{rng.choice(ACCENTED)} {i}"
        elif r < 0.08:
            name = f"{rng.choice(WORDS)}, {rng.choice(WORDS)} & {rng.choice(NOUNS)} {i}"
        elif r < 0.09:
            name = f'The "{rng.choice(WORDS)}" {rng.choice(NOUNS)} {i}'
        else:
            name = f"{rng.choice(WORDS)} {rng.choice(NOUNS)} {i}"
        names.append(name)
    return names


def text(rng, value):
    """Escapes text, sometimes as CDATA or with numeric character references, as real feeds do."""
    r = rng.random()
    if r < 0.02 and "]]>" not in value:
        return f"<![CDATA[{value}]]>"
    escaped = escape(value)
    if r < 0.04:
        return "".join(f"&#{ord(c)};" if ord(c) > 127 else c for c in escaped)
    return escaped


def write_feed(path, rng, n_artists, n_venues, n_events, names):
    """One record per line (indented by section), fields as child elements."""
    n_categories = 120
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
    with open(path, "w", encoding="utf-8", newline="\n", buffering=1 << 20) as f:
        w = f.write
        w('<?xml version="1.0" encoding="UTF-8"?>\n<feed generated="2015-03-01T06:00:00Z">\n')
        w("  <!-- synthetic feed written by bench/gen_feed.py -->\n  <categories>\n")
        for c in range(n_categories):
            parent = f"<parent_id>{10000 + c % 10}</parent_id>" if c >= 10 else ""
            w(f"    <category><id>{10000 + c}</id><name>{escape(rng.choice(WORDS))} &amp; "
              f"{escape(rng.choice(NOUNS))} {c}</name>{parent}</category>\n")
        w("  </categories>\n  <artists>\n")
        for a in range(n_artists):
            aid = 700000 + a
            w(f"    <artist><id>{aid}</id><name>{text(rng, names[a])}</name>"
              f"<category_id>{10000 + rng.randrange(n_categories)}</category_id>")
            if rng.random() < 0.8:
                w(f"<image_url>https://img.example/a/{aid}.jpg</image_url>")
            w(f"<url>https://tickets.example/artist/{aid}</url></artist>\n")
        w("  </artists>\n  <venues>\n")
        venue_ids = []
        for v in range(n_venues):
            vid = "Kov" + "".join(rng.choice(alphabet) for _ in range(9))
            venue_ids.append(vid)
            city, state, country, lat, lon = rng.choice(CITIES)
            kind = rng.choice(["Hall", "Room", "Arena", "Theatre", "Club", "Bar"])
            w(f"    <venue><id>{vid}</id><name>{text(rng, f'The {rng.choice(WORDS)} {kind} {v}')}</name>"
              f"<street>{rng.randrange(1, 9999)} {escape(rng.choice(STREETS))}</street>"
              f"<city>{escape(city)}</city>")
            if state:
                w(f"<state>{state}</state>")
            w(f"<zip>{rng.randrange(10000, 99999)}</zip>")
            if country != "US" or rng.random() < 0.5:
                w(f"<country>{country}</country>")
            if rng.random() < 0.95:
                vlat = max(-90.0, min(90.0, lat + rng.uniform(-0.2, 0.2)))
                vlon = (lon + rng.uniform(-0.2, 0.2) + 180.0) % 360.0 - 180.0
                w(f"<latitude>{vlat:.6f}</latitude><longitude>{vlon:.6f}</longitude>")
            if rng.random() < 0.5:
                w(f"<image_url>https://img.example/v/{vid}.jpg</image_url>")
            w(f"<url>https://tickets.example/venue/{vid}</url></venue>\n")
        w("  </venues>\n  <events>\n")
        for e in range(n_events):
            eid = f"{rng.getrandbits(64):016X}"
            performers = [rng.randrange(n_artists) for _ in range(rng.choice((1, 1, 1, 2, 2, 3)))]
            title = names[performers[0]] + rng.choice([" — Live", " World Tour", "", " with Friends", " (Late Show)"])
            w(f"    <event><id>{eid}</id><name>{text(rng, title)}</name>"
              f"<venue_id>{rng.choice(venue_ids)}</venue_id>"
              f"<category_id>{10000 + rng.randrange(n_categories)}</category_id><performers>")
            for p in performers:
                w(f"<artist_id>{700000 + p}</artist_id>")
            w(f"</performers><date>2015-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}</date>")
            if rng.random() < 0.9:
                w(f"<time>{rng.choice((18, 19, 19, 20, 20, 20, 21, 22))}:{rng.choice(('00', '30'))}</time>")
            w(f"<status>{rng.choice(STATUSES)}</status>")
            if rng.random() < 0.7:
                w(f"<onsale_date>2015-01-{rng.randrange(1, 29):02d}T{rng.randrange(0, 24):02d}:00:00Z</onsale_date>")
            w(f"<url>https://tickets.example/event/{eid}</url>")
            if rng.random() < 0.85:
                low = rng.randrange(10, 200)
                cents = ("00", "50", "99")
                w(f"<min_price>{low}.{rng.choice(cents)}</min_price>"
                  f"<max_price>{low + rng.randrange(1, 300)}.{rng.choice(cents)}</max_price>")
                currency = rng.choice(CURRENCIES)
                if currency != "USD" or rng.random() < 0.5:
                    w(f"<currency>{currency}</currency>")
            w("</event>\n")
        w("  </events>\n</feed>\n")


def csv_field(value):
    if any(c in value for c in ',"\r\n'):
        return '"' + value.replace('"', '""') + '"'
    return value


def write_affinity(path, rng, names):
    n = len(names)
    with open(path, "w", encoding="utf-8", newline="\n", buffering=1 << 20) as f:
        for a in range(n):
            if rng.random() < 0.33:
                continue
            fields = [csv_field(names[a])]
            for _ in range(rng.randrange(1, 9)):
                other = rng.randrange(n)
                fields += [str(700000 + other), csv_field(names[other]), f"{rng.random():.2f}"]
            f.write(",".join(fields) + "\n")
            if rng.random() < 0.01:
                f.write("\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("output", help="feed XML file to write")
    parser.add_argument("--artists", type=int, default=100_000)
    parser.add_argument("--venues", type=int, default=20_000)
    parser.add_argument("--events", type=int, default=220_000)
    parser.add_argument("--seed", type=int, default=2015)
    parser.add_argument("--affinity", metavar="PATH", help="also write an artist affinity file")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    names = artist_names(rng, max(1, args.artists))
    write_feed(args.output, rng, max(1, args.artists), max(1, args.venues), args.events, names)
    print(f"{args.output} {os.path.getsize(args.output)}")
    if args.affinity:
        write_affinity(args.affinity, random.Random(args.seed + 1), names)
        print(f"{args.affinity} {os.path.getsize(args.affinity)}")


if __name__ == "__main__":
    main()
