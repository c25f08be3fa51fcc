#!/usr/bin/env python3
"""Writes a deterministic synthetic OpenStreetMap XML file (.osm) of nightlife, culture and sport places
clustered around real city centres, for `tonight import osm` and the nearby-places benchmark.

    python3 bench/gen_osm.py OUT.osm [--places N] [--cities N] [--seed S] [--points OUT.txt] [--point-count K]

The centres are the N most populous cities of the bundled gazetteer
(Sources/TonightServer/Resources/gazetteer/cities.tsv, GeoNames CC BY 4.0); a city gets places in
proportion to the square root of its population, scattered around its centre (denser in the middle,
like real nightlife). Every place is a node tagged with a category Tonight imports (amenity=bar, pub,
nightclub, … or leisure=…) and a name; some have opening_hours, an address and a website. Node ids
increase, as in real extracts.

--points writes K request paths `/v1/places?near=LAT,LON&radius=2000` at points near the same centres
(same weighting), one a line, for wrk (bench/paths.lua).

Defaults: 1,000,000 places around 300 cities (about 300 MB). Prints only the paths written and their sizes.
"""

import argparse
import math
import os
import random
from xml.sax.saxutils import quoteattr

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GAZETTEER = os.path.join(ROOT, "Sources", "TonightServer", "Resources", "gazetteer", "cities.tsv")

# (tag key, value, weight): mostly bars and pubs, as in real OSM data.
KINDS = [
    ("amenity", "bar", 30), ("amenity", "pub", 22), ("amenity", "nightclub", 8), ("amenity", "biergarten", 2),
    ("amenity", "music_venue", 2), ("amenity", "theatre", 4), ("amenity", "cinema", 3),
    ("amenity", "arts_centre", 3), ("amenity", "events_venue", 2), ("amenity", "casino", 1),
    ("leisure", "sports_centre", 6), ("leisure", "pitch", 6), ("leisure", "fitness_centre", 5),
    ("leisure", "park", 4), ("leisure", "swimming_pool", 1), ("leisure", "dance", 1),
]
FIRST = ["Red", "Blue", "Golden", "Black", "Old", "New", "Royal", "Little", "Big", "Lucky", "Silver", "Green",
         "Crown", "King's", "Queen's", "Happy", "Velvet", "Neon", "Rusty", "Wild", "Café", "Zur", "Le", "La",
         "El", "Bar", "O'Malley's", "Brauhaus", "Søren's", "Plaza", "Corner", "Harbour", "Midnight", "Sunset"]
SECOND = ["Lion", "Anchor", "Fox", "Rose", "Star", "Moon", "Oak", "Bell", "Swan", "Horse", "Tavern", "Lounge",
          "Room", "Club", "Garden", "Hall", "Cellar", "Dock", "Tap", "Social", "Pavilion", "Theatre", "Arena",
          "Kneipe", "Bodega", "Cantina", "Izakaya", "Rooftop", "Sports Centre", "Pitch", "Gym", "Park"]
HOURS = [
    "Mo-Su 17:00-02:00", "Mo-Th 16:00-24:00; Fr-Sa 16:00-03:00; Su 16:00-23:00", "Tu-Sa 22:00-05:00",
    "Mo-Fr 11:00-23:00; Sa-Su 12:00-01:00", "24/7", "Mo-Su 10:00-22:00", "Fr-Sa 23:00-06:00",
    "Mo-Sa 12:00-24:00; Su off", "We-Su 18:00-02:00; PH off", "Mo-Su 06:00-22:00",
]
STREETS = ["Main Street", "High Street", "Market Street", "Station Road", "Church Street", "Hauptstraße",
           "Rue de la Paix", "Calle Mayor", "Via Roma", "King Street", "Harbour Road", "Park Avenue"]


def centres(n):
    """The n most populous gazetteer cities: (name, lat, lon, population), deterministic order."""
    rows = []
    with open(GAZETTEER, encoding="utf-8") as f:
        for line in f:
            if line.startswith("#"):
                continue
            fields = line.rstrip("\n").split("\t")
            rows.append((-int(fields[8] or 0), int(fields[0]), fields[1], float(fields[4]), float(fields[5])))
    rows.sort()
    return [(name, lat, lon, -negpop) for negpop, _, name, lat, lon in rows[:n]]


def scatter(rng, lat, lon, spread_km):
    """A point around (lat, lon): half in a dense core, the rest in a wider halo."""
    sigma = spread_km * (0.3 if rng.random() < 0.5 else 1.0)
    dy = rng.gauss(0.0, sigma) / 111.2
    dx = rng.gauss(0.0, sigma) / (111.2 * max(0.05, math.cos(math.radians(lat))))
    return max(-89.9, min(89.9, lat + dy)), (lon + dx + 180.0) % 360.0 - 180.0


def weighted_city(rng, cumulative, total):
    """Index of a city chosen with probability proportional to its weight."""
    x = rng.random() * total
    lo, hi = 0, len(cumulative) - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if cumulative[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("output", help=".osm file to write")
    parser.add_argument("--places", type=int, default=1_000_000)
    parser.add_argument("--cities", type=int, default=300)
    parser.add_argument("--seed", type=int, default=2015)
    parser.add_argument("--points", metavar="PATH", help="also write request paths near the same centres")
    parser.add_argument("--point-count", type=int, default=2000)
    parser.add_argument("--radius", type=int, default=2000, help="radius in the request paths (metres)")
    args = parser.parse_args()

    cities = centres(max(1, args.cities))
    weights = [math.sqrt(pop) for _, _, _, pop in cities]
    # Bigger cities spread wider: 3 km for the smallest, up to about 9 km for the largest.
    top = max(weights)
    spreads = [3.0 + 6.0 * w / top for w in weights]
    cumulative, total = [], 0.0
    for w in weights:
        total += w
        cumulative.append(total)
    kinds = [(k, v) for k, v, weight in KINDS for _ in range(weight)]

    rng = random.Random(args.seed)
    with open(args.output, "w", encoding="utf-8", newline="\n", buffering=1 << 20) as f:
        w = f.write
        w("<?xml version='1.0' encoding='UTF-8'?>\n")
        w('<osm version="0.6" generator="bench/gen_osm.py">\n')
        w(' <bounds minlat="-90" minlon="-180" maxlat="90" maxlon="180"/>\n')
        for i in range(args.places):
            c = weighted_city(rng, cumulative, total)
            _, clat, clon, _ = cities[c]
            lat, lon = scatter(rng, clat, clon, spreads[c])
            key, value = kinds[rng.randrange(len(kinds))]
            name = f"{rng.choice(FIRST)} {rng.choice(SECOND)} {i}"
            node_id = 100_000_000 + i * 7
            w(f' <node id="{node_id}" lat="{lat:.7f}" lon="{lon:.7f}" version="{rng.randrange(1, 9)}">\n')
            w(f'  <tag k="{key}" v="{value}"/>\n  <tag k="name" v={quoteattr(name)}/>\n')
            r = rng.random()
            if r < 0.45:
                w(f"  <tag k=\"opening_hours\" v={quoteattr(rng.choice(HOURS))}/>\n")
            if r < 0.3 or r > 0.8:
                w(f'  <tag k="addr:housenumber" v="{rng.randrange(1, 400)}"/>\n'
                  f"  <tag k=\"addr:street\" v={quoteattr(rng.choice(STREETS))}/>\n")
            if rng.random() < 0.2:
                w(f'  <tag k="website" v="https://example.com/p/{node_id}"/>\n')
            w(" </node>\n")
        w("</osm>\n")
    print(f"{args.output} {os.path.getsize(args.output)}")

    if args.points:
        prng = random.Random(args.seed + 7)
        with open(args.points, "w", encoding="utf-8", newline="\n") as f:
            for _ in range(args.point_count):
                c = weighted_city(prng, cumulative, total)
                _, clat, clon, _ = cities[c]
                lat, lon = scatter(prng, clat, clon, spreads[c])
                f.write(f"/v1/places?near={lat:.5f},{lon:.5f}&radius={args.radius}\n")
        print(f"{args.points} {os.path.getsize(args.points)}")


if __name__ == "__main__":
    main()
