# shellcheck shell=bash
# bench/run section suggest (sourced by bench/run; feed.sh imported the feed).

if want suggest; then
  section "suggest: server on the imported feed"
  suggest_key="suggest-a$BENCH_FEED_ARTISTS-s$BENCH_SEED-$(script_hash bench/gen_suggest.py bench/gen_feed.py)"
  cached "$suggest_key" python3 bench/gen_suggest.py "$cache/$suggest_key.txt" --artists "$BENCH_FEED_ARTISTS" \
    --seed "$BENCH_SEED"
  start_server "$feed_data"
  echo "tonight serve at $url on $feed_data"
  preflight suggest "$cache/$suggest_key.txt"
  bench suggest-health "$BENCH_LATENCY_CONNECTIONS" "$url/health"
  bench suggest "$BENCH_LATENCY_CONNECTIONS" -s "$root/bench/paths.lua" "$url" -- "$cache/$suggest_key.txt"
  stop_server
  section "suggest: results"
  {
    echo "## artist suggest ($BENCH_FEED_ARTISTS artists, prefixes of 1–6 letters)"
    table suggest-health suggest
    printf 'ratio suggest/health = %s\n' "$(ratio "$(rps suggest)" "$(rps suggest-health)")"
    printf 'suggest p99 = %s ms (goal < 5 ms: %s)\n\n' "$(p99 suggest)" "$(verdict "$(p99 suggest)" "<" 5)"
  } | tee -a "$out/summary.txt"
  check_errors suggest-health suggest
fi
