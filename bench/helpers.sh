# shellcheck shell=bash
# bench/run's helpers: the server, wrk and its figures, cached generators, timed imports.
# Sourced by bench/run after scripts/lib.sh.

# The server of the current step (start_server); stop_server stops it, and so does the exit.
server_pid=""
stop_server() {
  [ -z "$server_pid" ] || stop_pid "$server_pid"
  server_pid=""
}

# start_server DATA_DIR [env assignments…]: a release server on a free port; sets server_pid and url.
start_server() {
  local data=$1
  shift
  local port health=0
  port=$(free_port)
  url="http://127.0.0.1:$port"
  # From the temp dir so a ./.env is not read.
  (cd "$tmp" && exec env -u HTTP_HOST -u HTTP_PORT -u DATA_DIR -u DATABASE_URL "$@" \
    LOG_LEVEL=warning AUTH_BCRYPT_COST="$BENCH_BCRYPT_COST" \
    RATE_SIGNUP_PER_HOUR=0 RATE_LOGIN_IP_PER_MINUTE=0 RATE_LOGIN_ACCOUNT_PER_MINUTE=0 \
    HTTP_CONNECTIONS_PER_ADDRESS=0 RATE_UPLOADS_PER_HOUR=0 \
    "$bin" serve --host 127.0.0.1 --port "$port" --data-dir "$data") >>"$out/server.log" 2>&1 &
  server_pid=$!
  wait_healthy "$url" "$server_pid" 120 || health=$?
  if [ "$health" -ne 0 ]; then
    tail -n 50 "$out/server.log" >&2
    if [ "$health" -eq 1 ]; then die "server exited"; else die "no healthy answer within 120 s"; fi
  fi
}

# bench NAME CONNECTIONS wrk-args…: warm up, measure, keep the output in $out/NAME.txt.
bench() {
  local name=$1 connections=$2
  shift 2
  local threads=$((BENCH_THREADS < connections ? BENCH_THREADS : connections))
  section "$name (${threads} threads, $connections connections, $BENCH_DURATION)"
  wrk -t "$threads" -c "$connections" -d "$BENCH_WARMUP" --timeout 10s "$@" >/dev/null
  wrk --latency -t "$threads" -c "$connections" -d "$BENCH_DURATION" --timeout 10s "$@" | tee "$out/$name.txt"
}

rps() { awk '/^Requests\/sec:/ { print $2 }' "$out/$1.txt"; }
# p99 in milliseconds (wrk prints us, ms, s or m).
p99() {
  awk '$1 == "99%" {
    v = $2; u = v; sub(/[0-9.]+/, "", u); sub(/[a-z]+$/, "", v)
    if (u == "us") v /= 1000; else if (u == "s") v *= 1000; else if (u == "m") v *= 60000
    printf "%.2f", v }' "$out/$1.txt"
}
# Failed requests: non-2xx/3xx answers plus socket errors.
errors() {
  awk '/Non-2xx or 3xx responses:/ { n += $NF }
       /Socket errors:/ { gsub(/,/, ""); n += $4 + $6 + $8 + $10 }
       END { print n + 0 }' "$out/$1.txt"
}
# check_errors NAME…: warns about, and remembers, runs with failed requests.
check_errors() {
  local name
  for name in "$@"; do
    if [ "$(errors "$name")" != 0 ]; then
      echo "WARNING: $name had $(errors "$name") failed requests; see $out/$name.txt" >&2
      failed=1
    fi
  done
}
table() {
  local name
  printf '%-15s %12s %12s %8s\n' name "req/s" "p99 (ms)" errors
  for name in "$@"; do
    printf '%-15s %12s %12s %8s\n' "$name" "$(rps "$name")" "$(p99 "$name")" "$(errors "$name")"
  done
}
# ratio A B: A/B with two decimals.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }
# verdict VALUE OP LIMIT: "met" or "MISSED".
verdict() { awk -v v="$1" -v op="$2" -v l="$3" 'BEGIN {
  ok = (op == "<" ? v < l : op == "<=" ? v <= l : op == ">=" ? v >= l : 0); print (ok ? "met" : "MISSED") }'; }

# preflight NAME PATHS_FILE: the first request path must answer 200 with at least one item, so a
# broken route fails loudly before wrk measures error pages.
preflight() {
  local name=$1 file=$2 path status
  path=$(head -n 1 "$file")
  status=$(curl -sS -o "$tmp/preflight.json" -w '%{http_code}' "$url$path")
  [ "$status" = 200 ] || { head -c 2000 "$tmp/preflight.json" >&2; echo >&2; die "$name: GET $path answered $status"; }
  grep -q '"id"' "$tmp/preflight.json" || die "$name: GET $path found nothing: $(head -c 500 "$tmp/preflight.json")"
}

# cached KEY COMMAND…: runs COMMAND (which writes files named after $cache/KEY) unless its stamp exists.
cached() {
  local key=$1
  shift
  if [ -f "$cache/$key.done" ]; then
    echo "cached: $cache/$key.*"
  else
    rm -f "$cache/$key".*
    "$@"
    touch "$cache/$key.done"
  fi
}
script_hash() { sha256sum "$@" | sha256sum | cut -c1-10; }

# timed NAME COMMAND…: runs COMMAND under /usr/bin/time -v (output in $out/NAME.log, measures in
# $out/NAME.time); fails the run if it fails. Sets secs and peak_mb.
timed() {
  local name=$1
  shift
  local status=0
  /usr/bin/time -v -o "$out/$name.time" "$@" >"$out/$name.log" 2>&1 || status=$?
  secs=$(awk -F': ' '/Elapsed \(wall clock\)/ {
    n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; printf "%.2f", s }' "$out/$name.time")
  peak_mb=$(awk '/Maximum resident set size/ { printf "%.0f", $NF / 1024 }' "$out/$name.time")
  if [ "$status" != 0 ]; then
    tail -n 30 "$out/$name.log" >&2
    die "$name failed (exit $status); see $out/$name.log"
  fi
}
mb() { awk -v b="$(stat -c %s "$1")" 'BEGIN { printf "%.1f", b / 1e6 }'; }
# import_file KIND FILE DATA_DIR NAME [OPTION…]: `tonight import` under /usr/bin/time, from the temp
# dir (no ./.env), SQLite. Sets secs and peak_mb.
import_file() {
  local kind=$1 file=$2 data=$3 name=$4
  shift 4
  # Each import starts on a quiet disk: the kernel's write-back of the steps before (a first
  # import's 200 MB, the SQLite floor's copy) would otherwise be timed with it.
  sync
  timed "$name" env -C "$tmp" -u DATA_DIR -u DATABASE_URL LOG_LEVEL=warning \
    "$bin" import "$kind" "$file" --data-dir "$data" "$@"
  sed 's/^/    /' "$out/$name.log" | head -n 20
}
