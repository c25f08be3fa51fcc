# shellcheck shell=bash
# bench/run section recs (sourced by bench/run).

# recs_writes URL TOKEN EVENT: one more member says they are interested in EVENT and takes it back,
# BENCH_RECS_WRITES changes a second, until killed: every change moves the recommendation version.
recs_writes() {
  local pause
  pause=$(awk -v r="$BENCH_RECS_WRITES" 'BEGIN { printf "%.3f", 1 / r }')
  while :; do
    curl -s -o /dev/null -X PUT -H "Authorization: Bearer $2" -H 'Content-Type: application/json' \
      --data '{"status":"interested"}' "$1/v1/events/$3/attendance"
    sleep "$pause"
    curl -s -o /dev/null -X DELETE -H "Authorization: Bearer $2" "$1/v1/events/$3/attendance"
    sleep "$pause"
  done
}

if want recs; then
  section "recs: data (bench/gen_recs.py into a migrated SQLite database)"
  recs_data="$out/recs-data"
  rm -rf "$recs_data"
  BENCH_BCRYPT_COST=4 start_server "$recs_data"
  # The user with the generated history and friends, then fifteen more members asking at once.
  : >"$tmp/recs-tokens"
  for i in $(seq 0 $((BENCH_LATENCY_CONNECTIONS - 1))); do
    name=recsuser
    [ "$i" = 0 ] || name="recsuser$i"
    status=$(curl -sS -o "$tmp/recs-auth.json" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
      --data "{\"username\":\"$name\",\"email\":\"$name@example.com\",\"password\":\"a long enough passphrase\"}" \
      "$url/v1/auth/signup")
    [ "$status" = 201 ] || die "recs: sign-up answered $status"
    # (The answer has no final newline, so sed's output has none: echo adds it.)
    echo "$(sed -n 's/.*"accessToken" *: *"\([^"]*\)".*/\1/p' "$tmp/recs-auth.json")" >>"$tmp/recs-tokens"
  done
  recs_token=$(head -n 1 "$tmp/recs-tokens")
  status=$(curl -sS -o "$tmp/recs-auth.json" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
    --data '{"username":"recswriter","email":"recswriter@example.com","password":"a long enough passphrase"}' \
    "$url/v1/auth/signup")
  [ "$status" = 201 ] || die "recs: sign-up answered $status"
  recs_writer=$(sed -n 's/.*"accessToken" *: *"\([^"]*\)".*/\1/p' "$tmp/recs-auth.json")
  stop_server
  timed gen-recs python3 bench/gen_recs.py --db "$recs_data/tonight.sqlite" --user recsuser --seed "$BENCH_SEED"
  cat "$out/gen-recs.log" | tail -n 3
  auth="Authorization: Bearer $recs_token"
  sessions="/v1/me/recommendations/sessions?near=47.37,8.54&limit=20"
  events="/v1/me/recommendations/events?near=47.37,8.54&limit=20"
  # Computed for every request (RECS_CACHE_SECONDS=0): one user's requests one after another (the
  # goals' latency), then many members at once.
  BENCH_BCRYPT_COST=4 start_server "$recs_data" RECS_CACHE_SECONDS=0
  for kind in sessions events; do
    path="/v1/me/recommendations/$kind?near=47.37,8.54&limit=20"
    status=$(curl -sS -o "$tmp/recs.json" -w '%{http_code}' -H "$auth" "$url$path")
    [ "$status" = 200 ] || { head -c 2000 "$tmp/recs.json" >&2; die "recs: GET $path answered $status"; }
    grep -q '"id"' "$tmp/recs.json" || die "recs: GET $path recommended nothing: $(head -c 500 "$tmp/recs.json")"
  done
  c=$BENCH_RECS_CONNECTIONS C=$BENCH_LATENCY_CONNECTIONS
  bench "recs-health-$c" "$c" "$url/health"
  bench "recs-sessions-$c" "$c" -H "$auth" "$url$sessions"
  bench "recs-events-$c" "$c" -H "$auth" "$url$events"
  bench "recs-health-$C" "$C" "$url/health"
  bench "recs-sessions-$C" "$C" -s "$root/bench/paths.lua" "$url$sessions" -- "$tmp/recs-tokens" tokens
  bench "recs-events-$C" "$C" -s "$root/bench/paths.lua" "$url$events" -- "$tmp/recs-tokens" tokens
  stop_server
  # Kept per member while nothing they read changes (the default).
  BENCH_BCRYPT_COST=4 start_server "$recs_data"
  bench "recs-health-$C-kept" "$C" "$url/health"
  bench "recs-sessions-$C-kept" "$C" -s "$root/bench/paths.lua" "$url$sessions" -- "$tmp/recs-tokens" tokens
  bench "recs-events-$C-kept" "$C" -s "$root/bench/paths.lua" "$url$events" -- "$tmp/recs-tokens" tokens
  # Kept, while another member's interest changes BENCH_RECS_WRITES times a second: the version is
  # one for the whole database, so every change makes every member's next answer again.
  recs_event=$(curl -sS -H "$auth" "$url$events" | python3 -c 'import json,sys; print(json.load(sys.stdin)["items"][0]["event"]["id"])') ||
    die "recs: no event to write to"
  recs_writes "$url" "$recs_writer" "$recs_event" &
  recs_writes_pid=$!
  started_pids+=("$recs_writes_pid")
  bench "recs-sessions-$C-writes" "$C" -s "$root/bench/paths.lua" "$url$sessions" -- "$tmp/recs-tokens" tokens
  bench "recs-events-$C-writes" "$C" -s "$root/bench/paths.lua" "$url$events" -- "$tmp/recs-tokens" tokens
  stop_pid "$recs_writes_pid"
  stop_server
  section "recs: results"
  {
    echo "## recommendations (SQLite; ${c} user one request after another, ${C} members at once)"
    table "recs-health-$c" "recs-sessions-$c" "recs-events-$c" "recs-health-$C" "recs-sessions-$C" "recs-events-$C" \
      "recs-health-$C-kept" "recs-sessions-$C-kept" "recs-events-$C-kept" "recs-sessions-$C-writes" \
      "recs-events-$C-writes"
    printf 'computed, at %s connection(s): sessions p99 = %s ms (goal < 50 ms: %s); events p99 = %s ms (goal < 20 ms: %s)\n' \
      "$c" "$(p99 "recs-sessions-$c")" "$(verdict "$(p99 "recs-sessions-$c")" "<" 50)" \
      "$(p99 "recs-events-$c")" "$(verdict "$(p99 "recs-events-$c")" "<" 20)"
    printf '%s members at once: sessions computed p99 = %s ms, kept p99 = %s ms (goal < 50 ms: %s); events computed p99 = %s ms, kept p99 = %s ms (goal < 50 ms: %s)\n' \
      "$C" "$(p99 "recs-sessions-$C")" "$(p99 "recs-sessions-$C-kept")" \
      "$(verdict "$(p99 "recs-sessions-$C-kept")" "<" 50)" "$(p99 "recs-events-$C")" \
      "$(p99 "recs-events-$C-kept")" "$(verdict "$(p99 "recs-events-$C-kept")" "<" 50)"
    printf 'kept while another member changes their interest %s times a second: sessions p99 = %s ms, events p99 = %s ms (goal < 50 ms: %s, %s)\n' \
      "$BENCH_RECS_WRITES" "$(p99 "recs-sessions-$C-writes")" "$(p99 "recs-events-$C-writes")" \
      "$(verdict "$(p99 "recs-sessions-$C-writes")" "<" 50)" "$(verdict "$(p99 "recs-events-$C-writes")" "<" 50)"
    printf 'ratio to /health at %s connections: sessions computed %s, kept %s; events computed %s, kept %s\n\n' "$C" \
      "$(ratio "$(rps "recs-sessions-$C")" "$(rps "recs-health-$C")")" \
      "$(ratio "$(rps "recs-sessions-$C-kept")" "$(rps "recs-health-$C-kept")")" \
      "$(ratio "$(rps "recs-events-$C")" "$(rps "recs-health-$C")")" \
      "$(ratio "$(rps "recs-events-$C-kept")" "$(rps "recs-health-$C-kept")")"
  } | tee -a "$out/summary.txt"
  check_errors "recs-health-$c" "recs-sessions-$c" "recs-events-$c" "recs-health-$C" "recs-sessions-$C" \
    "recs-events-$C" "recs-health-$C-kept" "recs-sessions-$C-kept" "recs-events-$C-kept" "recs-sessions-$C-writes" \
    "recs-events-$C-writes"
fi
