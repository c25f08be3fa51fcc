# shellcheck shell=bash
# bench/run section chatpg (sourced by bench/run after chat.sh, whose helpers it uses).

if want chatpg; then
  chat_db=$DATABASE_URL
  if [ -z "$chat_db" ]; then
    section "chatpg: a throwaway PostgreSQL cluster"
    pg_start "$out" "-c max_connections=200"
    pg_createdb tonight_bench
    chat_db="postgres://postgres@127.0.0.1:$pg_port/tonight_bench"
  fi
  key=$(head -c 32 /dev/urandom | base64)
  section "chatpg: two instances on one PostgreSQL"
  BENCH_BCRYPT_COST=4 start_server "$tmp/chatpg-a" DATABASE_URL="$chat_db" JWT_KEY="$key"
  url_a=$url pid_a=$server_pid
  started_pids+=("$pid_a")
  server_pid=""
  BENCH_BCRYPT_COST=4 start_server "$tmp/chatpg-b" DATABASE_URL="$chat_db" JWT_KEY="$key"
  chat_load tonight --url "$url_a" --socket-url "$url" --pid "$server_pid" --rate "$BENCH_CHAT_RATE" \
    | tee "$out/chatpg.json"
  chat_load tonight --url "$url_a" --socket-url "$url" --pid "$server_pid" --rate "$BENCH_CHAT_BUSY_RATE" \
    | tee "$out/chatpg-busy.json"
  stop_server
  kill "$pid_a" 2>/dev/null || true
  section "chatpg: results"
  {
    echo "## cross-instance chat (posted to instance A, delivered to sockets on instance B, PostgreSQL LISTEN/NOTIFY)"
    printf '%-28s %9s %9s %9s %7s %8s\n' run "msgs/s" "p50 ms" "p99 ms" lost "RSS MB"
    chat_row "A → B, $BENCH_CHAT_RATE msgs/s" "$out/chatpg.json"
    chat_row "A → B, $BENCH_CHAT_BUSY_RATE msgs/s" "$out/chatpg-busy.json"
    printf 'cross-instance p99 = %s ms at %s msgs/s, %s ms at %s (goal < 20 ms: %s, %s)\n\n' \
      "$(json_field "$out/chatpg.json" p99_ms)" "$BENCH_CHAT_RATE" "$(json_field "$out/chatpg-busy.json" p99_ms)" \
      "$BENCH_CHAT_BUSY_RATE" "$(verdict "$(json_field "$out/chatpg.json" p99_ms)" "<" 20)" \
      "$(verdict "$(json_field "$out/chatpg-busy.json" p99_ms)" "<" 20)"
  } | tee -a "$out/summary.txt"
  for run in chatpg chatpg-busy; do [ "$(json_field "$out/$run.json" lost)" = 0 ] || failed=1; done
fi
