# shellcheck shell=bash
# bench/run section chat, and the chat client and helpers chatpg uses too (sourced by bench/run).

chat_python() {
  local venv="$cache/chat-venv"
  if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import websockets, aiohttp' 2>/dev/null; then
    venv_install "$venv" 'websockets==17.4' 'aiohttp==3.14.5' >&2
  fi
  echo "$venv/bin/python"
}
json_field() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }
chat_row() {
  printf '%-28s %9s %9s %9s %7s %8s\n' "$1" "$(json_field "$2" per_second)" "$(json_field "$2" p50_ms)" \
    "$(json_field "$2" p99_ms)" "$(json_field "$2" lost)" "$(json_field "$2" server_rss_mb)"
}
if want chat || want chatpg || want cluster; then
  ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
  py=$(chat_python)
fi

chat_load() { "$py" bench/chat_load.py "$@" --sockets "$BENCH_CHAT_SOCKETS" --pairs $((BENCH_CHAT_SOCKETS / 2)) \
  --seconds "$BENCH_CHAT_SECONDS" --senders "$BENCH_CHAT_SENDERS"; }
if want chat; then
  section "chat: Tonight on SQLite, $BENCH_CHAT_SOCKETS sockets, $BENCH_CHAT_RATE messages/s"
  BENCH_BCRYPT_COST=4 start_server "$tmp/chat-data"
  chat_load tonight --url "$url" --pid "$server_pid" --rate "$BENCH_CHAT_RATE" | tee "$out/chat-paced.json"
  section "chat: Tonight on SQLite, $BENCH_CHAT_SOCKETS sockets, $BENCH_CHAT_BUSY_RATE messages/s"
  chat_load tonight --url "$url" --pid "$server_pid" --rate "$BENCH_CHAT_BUSY_RATE" | tee "$out/chat-busy.json"
  section "chat: Tonight on SQLite, $BENCH_CHAT_SOCKETS sockets, $BENCH_CHAT_SENDERS closed-loop senders"
  chat_load tonight --url "$url" --pid "$server_pid" | tee "$out/chat.json"
  section "chat: the HTTP floor, the same senders' POSTs answered 401 before any work"
  chat_load posts --url "$url" --pid "$server_pid" | tee "$out/chat-posts.json"
  # The closed-loop Python senders above are bound by the client itself (its POSTs answered 401
  # reach only ~6,000/s): wrk posts flat out instead, while the same sockets count arrivals.
  section "chat: flat out, wrk posting on $BENCH_CHAT_FLOOD_CONNECTIONS connections, $BENCH_CHAT_SOCKETS sockets counting"
  chat_load flood --url "$url" --pid "$server_pid" --connections "$BENCH_CHAT_FLOOD_CONNECTIONS" \
    --pairs-file "$tmp/chat-pairs.txt" | tee "$out/chat-flood.json"
  section "chat: the floor of a posted message, wrk's same POSTs answered 401 before any work"
  chat_load flood --anonymous --url "$url" --connections "$BENCH_CHAT_FLOOD_CONNECTIONS" \
    --pairs-file "$tmp/chat-pairs-anonymous.txt" | tee "$out/chat-flood-posts.json"
  stop_server
  section "chat: Python websockets relay (baseline), $BENCH_CHAT_SOCKETS sockets"
  relay_port=$(free_port)
  "$py" bench/relay_server.py "$relay_port" >>"$out/relay.log" 2>&1 &
  relay_pid=$!
  started_pids+=("$relay_pid")
  sleep 1
  chat_load relay --url "ws://127.0.0.1:$relay_port" --pid "$relay_pid" --rate "$BENCH_CHAT_RATE" | tee "$out/relay-paced.json"
  chat_load relay --url "ws://127.0.0.1:$relay_port" --pid "$relay_pid" | tee "$out/relay.json"
  kill "$relay_pid" 2>/dev/null || true
  section "chat: the same relay on Hummingbird's WebSocket (bench/LiveFloor), $BENCH_CHAT_SOCKETS sockets"
  swift build -c release --product LiveFloor
  floor_bin="$(swift build -c release --show-bin-path)/LiveFloor"
  start_floor() {
    relay_port=$(free_port)
    "$floor_bin" "$relay_port" >>"$out/floor.log" 2>&1 &
    relay_pid=$!
    started_pids+=("$relay_pid")
    sleep 1
  }
  start_floor
  chat_load relay --url "ws://127.0.0.1:$relay_port" --pid "$relay_pid" | tee "$out/floor.json"
  kill "$relay_pid" 2>/dev/null || true
  section "chat: memory with $BENCH_CHAT_MEMORY_SOCKETS sockets, Tonight and the Hummingbird relay"
  BENCH_BCRYPT_COST=4 start_server "$tmp/chat-memory-data"
  idle_rss=$(awk '/^VmRSS:/ { print int($2 / 1024) }' "/proc/$server_pid/status")
  "$py" bench/chat_load.py tonight --url "$url" --sockets "$BENCH_CHAT_MEMORY_SOCKETS" --pairs 500 --seconds 3 \
    --rate "$BENCH_CHAT_RATE" --pid "$server_pid" | tee "$out/chat-memory.json"
  stop_server
  start_floor
  floor_idle_rss=$(awk '/^VmRSS:/ { print int($2 / 1024) }' "/proc/$relay_pid/status")
  "$py" bench/chat_load.py relay --url "ws://127.0.0.1:$relay_port" --sockets "$BENCH_CHAT_MEMORY_SOCKETS" \
    --pairs 500 --seconds 3 --rate "$BENCH_CHAT_RATE" --pid "$relay_pid" | tee "$out/floor-memory.json"
  kill "$relay_pid" 2>/dev/null || true
  section "chat: results"
  {
    echo "## live chat (${BENCH_CHAT_SECONDS}s runs; steady = $BENCH_CHAT_RATE messages/s, most = $BENCH_CHAT_SENDERS closed-loop senders)"
    printf '%-28s %9s %9s %9s %7s %8s\n' run "msgs/s" "p50 ms" "p99 ms" lost "RSS MB"
    chat_row "tonight steady" "$out/chat-paced.json"
    chat_row "python relay steady" "$out/relay-paced.json"
    chat_row "tonight busy" "$out/chat-busy.json"
    chat_row "tonight most" "$out/chat.json"
    chat_row "posts answered at once" "$out/chat-posts.json"
    chat_row "tonight flat out (wrk)" "$out/chat-flood.json"
    chat_row "posts answered at once (wrk)" "$out/chat-flood-posts.json"
    chat_row "python relay most" "$out/relay.json"
    chat_row "hummingbird relay most" "$out/floor.json"
    chat_row "tonight $BENCH_CHAT_MEMORY_SOCKETS sockets steady" "$out/chat-memory.json"
    chat_row "hb relay $BENCH_CHAT_MEMORY_SOCKETS sockets steady" "$out/floor-memory.json"
    printf 'ratio tonight/relay most msgs/s = %s\n' "$(ratio "$(json_field "$out/chat.json" per_second)" "$(json_field "$out/relay.json" per_second)")"
    most=$(json_field "$out/chat.json" per_second)
    posts=$(json_field "$out/chat-posts.json" per_second)
    printf 'ratio tonight most/posts answered at once = %s (this client cannot post faster: %s POSTs/s)\n' \
      "$(ratio "$most" "$posts")" "$posts"
    flood=$(json_field "$out/chat-flood.json" per_second)
    flood_posts=$(json_field "$out/chat-flood-posts.json" per_second)
    printf 'ratio tonight flat out/posts answered at once (wrk) = %s (no message can beat the floor: %s POSTs/s)\n' \
      "$(ratio "$flood" "$flood_posts")" "$flood_posts"
    printf 'tonight flat out = %s msgs/s stored and delivered (goal >= 5000: %s)\n' "$flood" "$(verdict "$flood" ">=" 5000)"
    printf 'ratio tonight/relay steady p99 = %s\n' "$(ratio "$(json_field "$out/chat-paced.json" p99_ms)" "$(json_field "$out/relay-paced.json" p99_ms)")"
    printf 'tonight steady p99 = %s ms (goal < 5 ms: %s)\n' "$(json_field "$out/chat-paced.json" p99_ms)" \
      "$(verdict "$(json_field "$out/chat-paced.json" p99_ms)" "<" 5)"
    printf 'tonight busy (%s messages/s) p99 = %s ms (goal < 20 ms: %s)\n' "$BENCH_CHAT_BUSY_RATE" \
      "$(json_field "$out/chat-busy.json" p99_ms)" "$(verdict "$(json_field "$out/chat-busy.json" p99_ms)" "<" 20)"
    tonight_rss=$(json_field "$out/chat-memory.json" server_rss_mb)
    floor_rss=$(json_field "$out/floor-memory.json" server_rss_mb)
    printf 'server RSS with %s sockets = %s MB (goal < 300 MB: %s); idle before them %s MB\n' \
      "$BENCH_CHAT_MEMORY_SOCKETS" "$tonight_rss" "$(verdict "$tonight_rss" "<" 300)" "$idle_rss"
    # For comparison: the relay on Hummingbird's WebSocket (a task per socket), which Tonight served
    # /v1/live on before its own SwiftNIO handlers.
    printf "the relay on Hummingbird's WebSocket: %s MB with them, %s MB idle\n" "$floor_rss" "$floor_idle_rss"
    printf "KB per socket: tonight %s, the relay on Hummingbird's WebSocket %s\n\n" \
      "$(((tonight_rss - idle_rss) * 1024 / BENCH_CHAT_MEMORY_SOCKETS))" \
      "$(((floor_rss - floor_idle_rss) * 1024 / BENCH_CHAT_MEMORY_SOCKETS))"
  } | tee -a "$out/summary.txt"
  for run in chat-paced chat-busy chat chat-flood chat-memory floor floor-memory; do [ "$(json_field "$out/$run.json" lost)" = 0 ] || failed=1; done
  for run in chat-flood chat-flood-posts; do [ "$(json_field "$out/$run.json" errors)" = 0 ] || failed=1; done
fi
