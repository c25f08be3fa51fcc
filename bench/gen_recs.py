#!/usr/bin/env python3
"""Fills a migrated Tonight SQLite database for the recommendation benchmarks (standard library only).

    gen_recs.py --db DATA/tonight.sqlite --user NAME [--sessions 100000] [--events 300000]
                [--artists 100000] [--edges 1000000] [--favorites 20] [--players 20000] [--seed S]

Around Zurich (47.37, 8.54), for the user NAME (already signed up):
  * sessions: SESSIONS sports sessions at 5,000 pitches spread over a 50 km radius, starting in the
    next 30 days, capacity 4–20, each with 1..capacity players (some full) drawn from PLAYERS users
    with random genders and birth dates; the user has quiz answers, a played history, and 50 friends
    among the players.
  * events: EVENTS shows in the next 60 days at 20,000 venues (a tenth within 25 km of the user, the
    rest around other cities), each with 1–3 of ARTISTS performers; EDGES affinity edges
    (ARTISTS × EDGES/ARTISTS similar artists each, scores in [0,1]); FAVORITES favourite artists.
Rows are written directly (the server must be stopped), with the same derived columns the server
writes (folded names, grid cells). Deterministic for a seed; prints counts.
"""
import argparse, datetime, math, random, sqlite3, time, uuid, zoneinfo

CENTER = (47.37, 8.54)
ZONE = zoneinfo.ZoneInfo("Europe/Zurich")
CITIES = [(48.86, 2.35, "Europe/Paris"), (52.52, 13.40, "Europe/Berlin"), (51.51, -0.13, "Europe/London"),
          (40.71, -74.0, "America/New_York"), (45.46, 9.19, "Europe/Rome"), (41.39, 2.17, "Europe/Madrid")]
SPORTS = ["basketball", "football", "tennis", "volleyball", "badminton", "running", "cycling", "climbing",
          "table-tennis", "padel", "yoga", "swimming", "hiking", "handball", "squash", "ultimate-frisbee"]
SKILLS = ["beginner", "intermediate", "advanced", "any"]
GENDERS = ["female", "male", "nonbinary", None]


def cell(lat, lon):
    """PlaceGrid.cell: 0.02° rows and columns."""
    row = min(8999, max(0, math.floor((lat + 90) / 0.02)))
    col = min(17999, max(0, math.floor((lon + 180) / 0.02)))
    return row * 18000 + col


def around(rng, lat, lon, km):
    """A point uniformly within `km` of (lat, lon)."""
    r = km * math.sqrt(rng.random())
    a = rng.random() * 2 * math.pi
    return lat + r * math.cos(a) / 111.2, lon + r * math.sin(a) / (111.2 * math.cos(math.radians(lat)))


def local(ms, zone):
    moment = datetime.datetime.fromtimestamp(ms / 1000, zone)
    return moment.strftime("%Y-%m-%d"), moment.strftime("%H:%M:00")


def new_id(rng):
    return str(uuid.UUID(int=rng.getrandbits(128)))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", required=True)
    parser.add_argument("--user", required=True)
    parser.add_argument("--sessions", type=int, default=100_000)
    parser.add_argument("--events", type=int, default=300_000)
    parser.add_argument("--artists", type=int, default=100_000)
    parser.add_argument("--edges", type=int, default=1_000_000)
    parser.add_argument("--favorites", type=int, default=20)
    parser.add_argument("--players", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=2022)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    db = sqlite3.connect(args.db)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=OFF")
    now = int(time.time() * 1000)
    (user,) = db.execute("SELECT id FROM users WHERE username = ?", (args.user,)).fetchone()
    db.execute(
        "UPDATE users SET home_city = 'Zürich', preferences = ? WHERE id = ?",
        ('{"sportsPlayed":["tennis","basketball","padel"],"sportsNotWanted":["swimming"],'
         '"preferredGenders":["female","nonbinary"],"preferredAgeGroups":["25-34","35-44"],'
         '"radiusMeters":10000,"budget":120}', user))

    # Players.
    players = []
    traits = {}  # the `players` column's entries: id,gender,birthDate
    rows = []
    for i in range(args.players):
        pid = new_id(rng)
        players.append(pid)
        year = rng.randrange(1960, 2008)
        birth = f"{year}-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}" if rng.random() < 0.8 else None
        gender = rng.choice(GENDERS)
        traits[pid] = f"{pid},{gender or ''},{birth or ''}"
        rows.append((pid, f"player{i}", f"player{i}", gender, birth, now, now))
    db.executemany("INSERT INTO users (id, is_anonymous, username, username_key, role, gender, birth_date, "
                   "created_at, updated_at) VALUES (?, 0, ?, ?, 'user', ?, ?, ?, ?)", rows)
    friends = rng.sample(players, 50)
    db.executemany("INSERT INTO friends (user_id, friend_id, created_at) VALUES (?, ?, ?)",
                   [(a, b, now) for f in friends for (a, b) in ((user, f), (f, user))])

    # Pitches and sessions.
    pitches = []
    rows = []
    for i in range(5000):
        lat, lon = around(rng, *CENTER, 50)
        pid = f"bench:pitch{i}"
        pitches.append(pid)
        rows.append((pid, f"Pitch {i}", f"pitch {i}", "pitch", lat, lon, cell(lat, lon), "Europe/Zurich", now, now))
    db.executemany("INSERT INTO places (id, name, name_folded, category, latitude, longitude, cell, time_zone, "
                   "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    events, attendance = [], []
    for i in range(args.sessions):
        eid = new_id(rng)
        start = now + rng.randrange(3600_000, 30 * 86_400_000) // 1800_000 * 1800_000
        date, clock = local(start, ZONE)
        sport, skill = rng.choice(SPORTS), rng.choice(SKILLS)
        capacity = rng.randrange(4, 21)
        players_in = rng.sample(players, min(capacity, rng.randrange(1, capacity + 1)))
        name = f"{sport} ({skill})"
        listed = ";".join(traits[p] for p in players_in)
        events.append((eid, "session", name, name.lower(), rng.choice(pitches), start, start + 5400_000, date, clock,
                       "Europe/Zurich", "scheduled", players_in[0], len(players_in), now, now, sport, skill, capacity,
                       listed))
        attendance += [(eid, p, now, now) for p in players_in]
    # The user's history: 30 sessions played in the past.
    for i in range(30):
        eid = new_id(rng)
        start = now - rng.randrange(2, 200) * 86_400_000
        date, clock = local(start, ZONE)
        sport, skill = rng.choice(SPORTS[:6]), rng.choice(SKILLS)
        events.append((eid, "session", sport, sport, rng.choice(pitches), start, start + 3600_000, date, clock,
                       "Europe/Zurich", "scheduled", user, 1, now, now, sport, skill, 10, f"{user},,"))
        attendance.append((eid, user, now, now))
    db.executemany("INSERT INTO events (id, kind, name, name_folded, place_id, start_at, end_at, local_date, "
                   "local_time, time_zone, status, organizer_id, going_count, created_at, updated_at, sport, skill, "
                   "capacity, players) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", events)
    db.executemany("INSERT INTO attendance (event_id, user_id, status, created_at, updated_at) "
                   "VALUES (?, ?, 'going', ?, ?)", attendance)

    # Artists, affinity, favourites.
    artists = [f"bench:a{i}" for i in range(args.artists)]
    db.executemany("INSERT INTO artists (id, name, name_folded, popularity, favorites_count, created_at, updated_at) "
                   "VALUES (?, ?, ?, ?, 0, ?, ?)",
                   [(a, f"Artist {i}", f"artist {i}", rng.randrange(100), now, now) for i, a in enumerate(artists)])
    per = max(1, args.edges // args.artists)
    edges = []
    for a in artists:
        for b in set(rng.sample(artists, per)):
            if b != a:
                edges.append((a, b, round(rng.random(), 2)))
    db.executemany("INSERT INTO affinity (artist_id, similar_id, score) VALUES (?, ?, ?)", edges)
    favorites = rng.sample(artists, args.favorites)
    db.executemany("INSERT INTO favorite_artists (user_id, artist_id, created_at) VALUES (?, ?, ?)",
                   [(user, a, now) for a in favorites])

    # Venues and shows.
    venues, rows = [], []
    for i in range(20000):
        if i % 10 == 0:
            lat, lon, zone = *around(rng, *CENTER, 25), "Europe/Zurich"
        else:
            clat, clon, zone = rng.choice(CITIES)
            lat, lon = around(rng, clat, clon, 30)
        vid = f"bench:v{i}"
        venues.append((vid, zone))
        rows.append((vid, f"Venue {i}", f"venue {i}", "club", lat, lon, cell(lat, lon), zone, now, now))
    db.executemany("INSERT INTO places (id, name, name_folded, category, latitude, longitude, cell, time_zone, "
                   "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    shows, performers = [], []
    zones = {z: zoneinfo.ZoneInfo(z) for _, z in venues}
    for i in range(args.events):
        eid = f"bench:e{i}"
        vid, zone = rng.choice(venues)
        start = now + rng.randrange(3600_000, 60 * 86_400_000) // 1800_000 * 1800_000
        date, clock = local(start, zones[zone])
        low = rng.randrange(10, 200)
        name = f"Show {i}"
        shows.append((eid, "show", name, name.lower(), vid, start, date, clock, zone, "onsale", low, low + 40,
                      rng.randrange(0, 50), now, now))
        for position, artist in enumerate(rng.sample(artists, rng.choice((1, 1, 1, 2, 2, 3)))):
            performers.append((eid, artist, position))
    db.executemany("INSERT INTO events (id, kind, name, name_folded, place_id, start_at, local_date, local_time, "
                   "time_zone, status, min_price, max_price, going_count, created_at, updated_at) "
                   "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", shows)
    db.executemany("INSERT INTO event_performers (event_id, artist_id, position) VALUES (?, ?, ?)", performers)
    db.commit()
    db.close()
    print(f"sessions {args.sessions} (+30 played), attendance {len(attendance)}, players {args.players}, "
          f"artists {args.artists}, affinity edges {len(edges)}, favourites {args.favorites}, "
          f"shows {args.events}, performers {len(performers)}")


if __name__ == "__main__":
    main()
