# shellcheck shell=bash
# bench/run section media (sourced by bench/run).

if want media; then
  section "media: Range streaming, Tonight against nginx on the same ${BENCH_MEDIA_MB} MB file"
  media_data="$tmp/media-data"
  mkdir -p "$media_data/media/posts/bench"
  head -c $((BENCH_MEDIA_MB * 1048576)) /dev/urandom >"$media_data/media/posts/bench/video.mp4"
  BENCH_BCRYPT_COST=4 start_server "$media_data"
  # A post's media is served only while its post exists and is visible: give the file its row.
  post_row="INSERT INTO posts (id, city_key, status, media_kind, original_key, original_type, created_at, updated_at)
    VALUES ('bench', 'bench', 'ready', 'video', 'posts/bench/video.mp4', 'video/mp4', 0, 0)
    ON CONFLICT (id) DO NOTHING"
  if [ -n "$DATABASE_URL" ]; then
    psql -q "$DATABASE_URL" -c "$post_row"
  else
    sqlite3 "$media_data/tonight.sqlite" "$post_row"
  fi
  nginx_port=$(free_port)
  mkdir -p "$tmp/nginx/logs"
  cat >"$tmp/nginx/nginx.conf" <<NGINX
user $(id -un);
worker_processes 2;
pid $tmp/nginx/nginx.pid;
error_log $tmp/nginx/logs/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  sendfile on;
  tcp_nopush on;
  types { video/mp4 mp4; }
  server {
    listen 127.0.0.1:$nginx_port;
    location /v1/media/ { alias $media_data/media/; }
  }
}
NGINX
  nginx -c "$tmp/nginx/nginx.conf" -p "$tmp/nginx" -g 'daemon off;' &
  nginx_pid=$!
  started_pids+=("$nginx_pid")
  sleep 1
  range="Range: bytes=0-$((BENCH_MEDIA_RANGE_KB * 1024 - 1))"
  for who in tonight nginx; do
    base=$([ "$who" = tonight ] && echo "$url" || echo "http://127.0.0.1:$nginx_port")
    status=$(curl -sS -o /dev/null -w '%{http_code}' -H "$range" "$base/v1/media/posts/bench/video.mp4")
    [ "$status" = 206 ] || die "media: $who answered $status to a Range request"
    bench "media-$who" "$BENCH_MEDIA_CONNECTIONS" -H "$range" "$base/v1/media/posts/bench/video.mp4"
  done
  kill "$nginx_pid" 2>/dev/null || true
  stop_server
  section "media: results"
  {
    echo "## media Range streaming (${BENCH_MEDIA_RANGE_KB} KB ranges of a ${BENCH_MEDIA_MB} MB file, ${BENCH_MEDIA_CONNECTIONS} connections)"
    table media-tonight media-nginx
    mbs() { awk '/^Transfer\/sec:/ { v = $2; u = v; sub(/[0-9.]+/, "", u); sub(/[A-Za-z]+$/, "", v);
      if (u == "GB") v *= 1024; else if (u == "KB") v /= 1024; printf "%.1f", v }' "$out/$1.txt"; }
    printf 'throughput tonight %s MB/s, nginx %s MB/s; ratio tonight/nginx = %s (goal >= 0.80: %s)\n\n' \
      "$(mbs media-tonight)" "$(mbs media-nginx)" "$(ratio "$(mbs media-tonight)" "$(mbs media-nginx)")" \
      "$(verdict "$(ratio "$(mbs media-tonight)" "$(mbs media-nginx)")" ">=" 0.80)"
  } | tee -a "$out/summary.txt"
  check_errors media-tonight media-nginx
fi
