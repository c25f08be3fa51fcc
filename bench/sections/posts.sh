# shellcheck shell=bash
# bench/run sections votes and placefeed: one server with a place, its voters and clips
# (sourced by bench/run). On SQLite, or on PostgreSQL with BENCH_POSTS_POSTGRES_URL (an empty
# database; the page cache there follows change notifications).

if want votes || want placefeed; then
  section "posts: a server with a place, ${BENCH_VOTERS} voters and ${BENCH_FEED_CLIPS} clips (bench/posts_setup.py)"
  [ -f "$cache/bench.jpg" ] || ffmpeg -v error -y -f lavfi -i testsrc2=size=640x360 -frames:v 1 "$cache/bench.jpg"
  posts_data="$tmp/posts-data"
  mkdir -p "$posts_data"
  posts_db=()
  posts_engine=SQLite
  if [ -n "${BENCH_POSTS_POSTGRES_URL:-}" ]; then
    posts_db=("DATABASE_URL=$BENCH_POSTS_POSTGRES_URL")
    posts_engine=PostgreSQL
  fi
  env "${posts_db[@]}" "$bin" admin create-user --username benchmod --email benchmod@example.com \
    --password "a long enough passphrase" --role moderator --data-dir "$posts_data" >/dev/null
  BENCH_BCRYPT_COST=4 start_server "$posts_data" JOBS_POLL_MS=100 "${posts_db[@]}"
  python3 bench/posts_setup.py --url "$url" --moderator "benchmod:a long enough passphrase" \
    --voters "$BENCH_VOTERS" --clips "$BENCH_FEED_CLIPS" --image "$cache/bench.jpg" --out "$tmp/posts"
  vote_post=$(cat "$tmp/posts/vote_post.txt")
  bench posts-health "$BENCH_CONNECTIONS" "$url/health"
  if want votes; then
    bench votes "$BENCH_CONNECTIONS" -s bench/votes.lua "$url" -- "$tmp/posts/voters.txt" "$vote_post"
    sleep 1
    counts=$(curl -sS "$url/v1/posts/$vote_post" | python3 -c 'import json,sys; p=json.load(sys.stdin); print(p["up"], p["down"])')
    if [ -n "${BENCH_POSTS_POSTGRES_URL:-}" ]; then
      truth=$(psql "$BENCH_POSTS_POSTGRES_URL" -qtA -F ' ' -c "SELECT COUNT(*) FILTER (WHERE value = 1), COUNT(*) FILTER (WHERE value = -1) FROM post_votes WHERE post_id = '$vote_post'")
    else
      truth=$(python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); print(*c.execute("SELECT COALESCE(SUM(value=1),0), COALESCE(SUM(value=-1),0) FROM post_votes WHERE post_id=?", (sys.argv[2],)).fetchone())' \
        "$posts_data/tonight.sqlite" "$vote_post")
    fi
    exact=$([ "$counts" = "$truth" ] && echo exact || echo "DRIFTED")
    [ "$exact" = exact ] || failed=1
  fi
  if want placefeed; then
    preflight placefeed "$tmp/posts/place_feed.txt"
    bench placefeed "$BENCH_CONNECTIONS" -s bench/paths.lua "$url" -- "$tmp/posts/place_feed.txt"
  fi
  stop_server
  section "posts: results"
  {
    echo "## posts (${BENCH_CONNECTIONS} connections, $posts_engine)"
    table posts-health $(want votes && echo votes) $(want placefeed && echo placefeed)
    if want votes; then
      printf 'votes/s = %s (goal > 5000: %s); counters %s (post up/down %s, per-user rows %s)\n' "$(rps votes)" \
        "$(verdict "$(rps votes)" ">=" 5000)" "$exact" "$counts" "$truth"
      printf 'ratio votes/health = %s; votes vs DynamoDB partition cap (1000/s) = %s\n' \
        "$(ratio "$(rps votes)" "$(rps posts-health)")" "$(ratio "$(rps votes)" 1000)"
    fi
    if want placefeed; then
      printf 'ratio placefeed/health = %s (goal >= 0.30: %s); placefeed p99 = %s ms (goal < 10 ms: %s)\n' \
        "$(ratio "$(rps placefeed)" "$(rps posts-health)")" \
        "$(verdict "$(ratio "$(rps placefeed)" "$(rps posts-health)")" ">=" 0.30)" "$(p99 placefeed)" \
        "$(verdict "$(p99 placefeed)" "<" 10)"
    fi
    echo
  } | tee -a "$out/summary.txt"
  check_errors posts-health $(want votes && echo votes) $(want placefeed && echo placefeed)
fi
