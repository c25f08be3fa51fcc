# shellcheck shell=bash
# bench/run section recs (sourced by bench/run).

if want recs; then
  section "recs: data (bench/gen_recs.py into a migrated SQLite database)"
  recs_data="$out/recs-data"
  rm -rf "$recs_data"
  BENCH_BCRYPT_COST=4 start_server "$recs_data"
  status=$(curl -sS -o "$tmp/recs-auth.json" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
    --data '{"username":"recsuser","email":"recs@example.com","password":"a long enough passphrase"}' \
    "$url/v1/auth/signup")
  [ "$status" = 201 ] || die "recs: sign-up answered $status"
  recs_token=$(sed -n 's/.*"accessToken" *: *"\([^"]*\)".*/\1/p' "$tmp/recs-auth.json")
  stop_server
  timed gen-recs python3 bench/gen_recs.py --db "$recs_data/tonight.sqlite" --user recsuser --seed "$BENCH_SEED"
  cat "$out/gen-recs.log" | tail -n 3
  BENCH_BCRYPT_COST=4 start_server "$recs_data"
  auth="Authorization: Bearer $recs_token"
  for kind in sessions events; do
    path="/v1/me/recommendations/$kind?near=47.37,8.54&limit=20"
    status=$(curl -sS -o "$tmp/recs.json" -w '%{http_code}' -H "$auth" "$url$path")
    [ "$status" = 200 ] || { head -c 2000 "$tmp/recs.json" >&2; die "recs: GET $path answered $status"; }
    grep -q '"id"' "$tmp/recs.json" || die "recs: GET $path recommended nothing: $(head -c 500 "$tmp/recs.json")"
  done
  # One user's requests one after another (the goals' latency), then many users at once.
  for c in "$BENCH_RECS_CONNECTIONS" "$BENCH_LATENCY_CONNECTIONS"; do
    bench "recs-health-$c" "$c" "$url/health"
    bench "recs-sessions-$c" "$c" -H "$auth" "$url/v1/me/recommendations/sessions?near=47.37,8.54&limit=20"
    bench "recs-events-$c" "$c" -H "$auth" "$url/v1/me/recommendations/events?near=47.37,8.54&limit=20"
  done
  stop_server
  section "recs: results"
  {
    echo "## recommendations for one user (SQLite; ${BENCH_RECS_CONNECTIONS} and ${BENCH_LATENCY_CONNECTIONS} connections)"
    c=$BENCH_RECS_CONNECTIONS C=$BENCH_LATENCY_CONNECTIONS
    table "recs-health-$c" "recs-sessions-$c" "recs-events-$c" "recs-health-$C" "recs-sessions-$C" "recs-events-$C"
    printf 'at %s connection(s): sessions p99 = %s ms (goal < 50 ms: %s); events p99 = %s ms (goal < 20 ms: %s)\n' "$c" \
      "$(p99 "recs-sessions-$c")" "$(verdict "$(p99 "recs-sessions-$c")" "<" 50)" \
      "$(p99 "recs-events-$c")" "$(verdict "$(p99 "recs-events-$c")" "<" 20)"
    printf 'at %s connections: ratio sessions/health = %s, events/health = %s\n\n' "$C" \
      "$(ratio "$(rps "recs-sessions-$C")" "$(rps "recs-health-$C")")" \
      "$(ratio "$(rps "recs-events-$C")" "$(rps "recs-health-$C")")"
  } | tee -a "$out/summary.txt"
  check_errors "recs-health-$BENCH_RECS_CONNECTIONS" "recs-sessions-$BENCH_RECS_CONNECTIONS" \
    "recs-events-$BENCH_RECS_CONNECTIONS" "recs-health-$BENCH_LATENCY_CONNECTIONS" \
    "recs-sessions-$BENCH_LATENCY_CONNECTIONS" "recs-events-$BENCH_LATENCY_CONNECTIONS"
fi
