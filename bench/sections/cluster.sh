# shellcheck shell=bash
# bench/run section cluster (sourced by bench/run, after chat.sh whose chat client it uses): the
# production shapes side by side in one run — one instance on SQLite, one on PostgreSQL, the same one
# behind haproxy, two on PostgreSQL behind haproxy — each measured on GET /health, GET /v1/me, a venue
# feed page (anonymous, cached), votes on one hot post, and chat delivered through it at
# BENCH_CHAT_RATE. Ratios are to the SQLite instance, and two instances to one (reached directly, and
# behind the same load balancer: the second ratio is what adding an instance to a running cluster
# does, without the proxy's own hop). The CPU each tier (Tonight, PostgreSQL, haproxy) spends per
# request is read from /proc around every run: the capacity model of docs/operations.md.

# cpu_ms PID…: CPU time (user + system) the processes have used, in milliseconds.
cpu_ms() {
  local tick pid total=0 fields
  tick=$(getconf CLK_TCK)
  for pid in "$@"; do
    fields=$(awk '{ print $14 + $15 }' "/proc/$pid/stat" 2>/dev/null || echo 0)
    total=$((total + fields))
  done
  echo $((total * 1000 / tick))
}
# The PostgreSQL server and its backends.
pg_pids() {
  local postmaster
  postmaster=$(head -n 1 "$pg_data/postmaster.pid")
  echo "$postmaster" $(pgrep -P "$postmaster")
}

# cluster_bench SHAPE NAME CONNECTIONS wrk-args…: bench NAME (as SHAPE-NAME), recording each tier's
# CPU milliseconds per request in $out/SHAPE-NAME.cpu ("tonight postgres haproxy").
cluster_bench() {
  local shape=$1 name=$2
  shift 2
  local before_app before_pg before_lb requests
  before_app=$(cpu_ms "${cluster_app_pids[@]}")
  before_pg=$([ "$shape" = sqlite ] && echo 0 || cpu_ms $(pg_pids))
  before_lb=$([ -n "$cluster_lb_pid" ] && cpu_ms "$cluster_lb_pid" || echo 0)
  bench "$shape-$name" "$@"
  # Warm-up included: CPU is counted over both wrk runs, requests too.
  requests=$(awk '/requests in/ { print $1 }' "$out/$shape-$name.txt")
  requests=$(awk -v r="$requests" -v rps="$(rps "$shape-$name")" -v w="${BENCH_WARMUP%s}" 'BEGIN { printf "%d", r + rps * w }')
  awk -v a="$(($(cpu_ms "${cluster_app_pids[@]}") - before_app))" \
    -v p="$(($([ "$shape" = sqlite ] && echo 0 || cpu_ms $(pg_pids)) - before_pg))" \
    -v l="$(($([ -n "$cluster_lb_pid" ] && cpu_ms "$cluster_lb_pid" || echo 0) - before_lb))" -v n="$requests" \
    'BEGIN { printf "%.3f %.3f %.3f\n", a / n, p / n, l / n }' >"$out/$shape-$name.cpu"
}

# cluster_lb ADDRESS_A ADDRESS_B: starts haproxy in front of the two instances (host:port; the same
# address twice for one instance behind it) and points $target at it.
cluster_lb() {
  local lb_port
  lb_port=$(free_port)
  TONIGHT_LB="127.0.0.1:$lb_port" TONIGHT_A=$1 TONIGHT_B=$2 haproxy -f scripts/haproxy.cfg -db >>"$out/haproxy.log" 2>&1 &
  cluster_lb_pid=$!
  started_pids+=("$cluster_lb_pid")
  target="http://127.0.0.1:$lb_port"
  wait_healthy "$target" "$cluster_lb_pid" 30 || die "haproxy did not answer"
}

# cluster_shape SHAPE: starts the shape (sqlite | pg | pglb | pg2), fills it, measures it, stops it.
cluster_shape() {
  local shape=$1 data="$tmp/cluster-$1" db=() target token
  cluster_app_pids=()
  cluster_lb_pid=""
  if [ "$shape" != sqlite ]; then
    pg_createdb "cluster_$shape"
    db=("DATABASE_URL=postgres://postgres@127.0.0.1:$pg_port/cluster_$shape")
  fi
  section "cluster: $shape"
  env "${db[@]}" "$bin" admin create-user --username benchmod --email benchmod@example.com \
    --password "a long enough passphrase" --role moderator --data-dir "$data-a" >/dev/null
  BENCH_BCRYPT_COST=4 start_server "$data-a" JOBS_POLL_MS=100 JWT_KEY="$cluster_key" "${db[@]}"
  target=$url
  cluster_app_pids=("$server_pid")
  started_pids+=("$server_pid")
  server_pid=""
  if [ "$shape" = pg2 ]; then
    local url_a=$url
    # The same data dir: its media folder stands for the S3 bucket both would share.
    BENCH_BCRYPT_COST=4 start_server "$data-a" JOBS_POLL_MS=100 JWT_KEY="$cluster_key" "${db[@]}"
    cluster_app_pids+=("$server_pid")
    started_pids+=("$server_pid")
    server_pid=""
    cluster_lb "${url_a#http://}" "${url#http://}"
  elif [ "$shape" = pglb ]; then
    cluster_lb "${url#http://}" "${url#http://}"
  fi
  url=$target
  python3 bench/posts_setup.py --url "$target" --moderator "benchmod:a long enough passphrase" \
    --voters "$BENCH_VOTERS" --clips "$BENCH_FEED_CLIPS" --image "$cache/bench.jpg" --out "$tmp/cluster-$shape"
  token=$(head -n 1 "$tmp/cluster-$shape/voters.txt")
  preflight placefeed "$tmp/cluster-$shape/place_feed.txt"
  cluster_bench "$shape" health "$BENCH_CLUSTER_CONNECTIONS" "$target/health"
  cluster_bench "$shape" me "$BENCH_CLUSTER_CONNECTIONS" -H "Authorization: Bearer $token" "$target/v1/me"
  cluster_bench "$shape" placefeed "$BENCH_CLUSTER_CONNECTIONS" -s bench/paths.lua "$target" -- \
    "$tmp/cluster-$shape/place_feed.txt"
  cluster_bench "$shape" votes "$BENCH_CLUSTER_CONNECTIONS" -s bench/votes.lua "$target" -- \
    "$tmp/cluster-$shape/voters.txt" "$(cat "$tmp/cluster-$shape/vote_post.txt")"
  section "cluster: $shape, chat at $BENCH_CHAT_RATE messages/s"
  chat_load tonight --url "$target" --pid "${cluster_app_pids[0]}" --rate "$BENCH_CHAT_RATE" |
    tee "$out/$shape-chat.json"
  local pid
  for pid in "${cluster_app_pids[@]}" $cluster_lb_pid; do stop_pid "$pid"; done
}

# per_core MS: requests/s one core carries at MS CPU milliseconds a request ("-" when too small to tell).
per_core() { awk -v c="$1" 'BEGIN { if (c >= 0.005) printf "%.0f", 1000 / c; else print "-" }'; }

# cluster_row MEASURE: req/s and p99 of each shape, and the ratios.
cluster_row() {
  local m=$1 shape
  printf '%-10s' "$m"
  for shape in $cluster_shapes; do printf ' %9s %8s' "$(rps "$shape-$m")" "$(p99 "$shape-$m")"; done
  printf ' %8s %8s %8s\n' "$(ratio "$(rps "pg-$m")" "$(rps "sqlite-$m")")" "$(ratio "$(rps "pg2-$m")" "$(rps "pg-$m")")" \
    "$(ratio "$(rps "pg2-$m")" "$(rps "pglb-$m")")"
}

if want cluster; then
  BENCH_CLUSTER_CONNECTIONS=${BENCH_CLUSTER_CONNECTIONS:-32}
  [ -f "$cache/bench.jpg" ] || ffmpeg -v error -y -f lavfi -i testsrc2=size=640x360 -frames:v 1 "$cache/bench.jpg"
  if [ -z "$pg_port" ]; then
    section "cluster: a throwaway PostgreSQL cluster"
    pg_start "$out" "-c max_connections=300 -c shared_buffers=256MB"
  fi
  cluster_key=$(head -c 32 /dev/urandom | base64)
  cluster_shapes="sqlite pg pglb pg2"
  for shape in $cluster_shapes; do cluster_shape "$shape"; done
  section "cluster: results"
  {
    echo "## cluster ($BENCH_CLUSTER_CONNECTIONS connections; pglb = one instance behind haproxy, pg2 = two; all on $(nproc) cores)"
    printf '%-10s %9s %8s %9s %8s %9s %8s %9s %8s %8s %8s %8s\n' measure "sqlite/s" "p99 ms" "pg/s" "p99 ms" \
      "pglb/s" "p99 ms" "pg2/s" "p99 ms" "pg/sql" "pg2/pg" "pg2/pglb"
    for m in health me placefeed votes; do cluster_row "$m"; done
    for shape in $cluster_shapes; do
      printf 'chat %-6s %s msgs/s, p50 %s ms, p99 %s ms, lost %s\n' "$shape" "$(json_field "$out/$shape-chat.json" per_second)" \
        "$(json_field "$out/$shape-chat.json" p50_ms)" "$(json_field "$out/$shape-chat.json" p99_ms)" \
        "$(json_field "$out/$shape-chat.json" lost)"
    done
    echo "CPU ms per request (Tonight / PostgreSQL / haproxy), and requests/s one core of each tier carries:"
    for shape in pg pglb pg2; do
      for m in health me placefeed votes; do
        read -r app db lb <"$out/$shape-$m.cpu"
        printf '  %-4s %-10s %6s / %6s / %6s ms   one Tonight core %7s/s, one PostgreSQL core %s/s\n' "$shape" "$m" \
          "$app" "$db" "$lb" "$(per_core "$app")" "$(per_core "$db")"
      done
    done
    echo
  } | tee -a "$out/summary.txt"
  for shape in $cluster_shapes; do
    check_errors "$shape-health" "$shape-me" "$shape-placefeed" "$shape-votes"
    [ "$(json_field "$out/$shape-chat.json" lost)" = 0 ] || failed=1
  done
fi
