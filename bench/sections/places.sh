# shellcheck shell=bash
# bench/run section places (sourced by bench/run).

if want places; then
  section "places: generate (bench/gen_osm.py, cached)"
  osm_key="osm-p$BENCH_OSM_PLACES-c$BENCH_OSM_CITIES-r$BENCH_RADIUS-s$BENCH_SEED"
  osm_key="$osm_key-$(script_hash bench/gen_osm.py Sources/TonightServer/Resources/gazetteer/cities.tsv)"
  osm_file="$cache/$osm_key.osm"
  points_file="$cache/$osm_key.points.txt"
  cached "$osm_key" python3 bench/gen_osm.py "$osm_file" --places "$BENCH_OSM_PLACES" --cities "$BENCH_OSM_CITIES" \
    --seed "$BENCH_SEED" --radius "$BENCH_RADIUS" --points "$points_file"
  osm_mb=$(mb "$osm_file")
  echo "osm $osm_file ($osm_mb MB)"

  if [ -n "$BENCH_PLACES_DATA" ]; then
    section "places: reusing the imported places in $BENCH_PLACES_DATA (no import)"
    places_data=$BENCH_PLACES_DATA
    osm_secs="" osm_peak=""
  else
    section "places: tonight import osm (fresh SQLite data dir)"
    places_data="$out/places-data"
    rm -rf "$places_data"
    import_file osm "$osm_file" "$places_data" import-osm
    osm_secs=$secs osm_peak=$peak_mb
  fi

  section "places: server on the imported places"
  start_server "$places_data"
  echo "tonight serve at $url on $places_data"
  preflight places "$points_file"
  # Cold: the places kept in memory (NearbyIndex) are being read as the points first need them.
  bench places-cold "$BENCH_LATENCY_CONNECTIONS" -s "$root/bench/paths.lua" "$url" -- "$points_file"
  section "places: warming up over every point ($BENCH_PLACES_WARMUP)"
  wrk -t "$BENCH_THREADS" -c "$BENCH_LATENCY_CONNECTIONS" -d "$BENCH_PLACES_WARMUP" -s "$root/bench/paths.lua" "$url" \
    -- "$points_file" >/dev/null
  bench places-health "$BENCH_LATENCY_CONNECTIONS" "$url/health"
  bench places "$BENCH_LATENCY_CONNECTIONS" -s "$root/bench/paths.lua" "$url" -- "$points_file"
  # One client's requests one after another: the latency of the search itself, without queueing.
  bench places-health-1 1 "$url/health"
  bench places-1 1 -s "$root/bench/paths.lua" "$url" -- "$points_file"
  stop_server
  section "places: the same server reading the database for every search (NEARBY_CACHE_PLACES=0)"
  start_server "$places_data" NEARBY_CACHE_PLACES=0
  bench places-db "$BENCH_LATENCY_CONNECTIONS" -s "$root/bench/paths.lua" "$url" -- "$points_file"
  stop_server
  if [ -n "$(find_pg_bin)" ]; then
    # The same on PostgreSQL (a throwaway cluster, stopped again for the sections that start their own).
    section "places: tonight import osm into a throwaway PostgreSQL cluster"
    pg_start "$out" "-c max_connections=200"
    pg_createdb tonight_places
    places_db="postgres://postgres@127.0.0.1:$pg_port/tonight_places"
    mkdir -p "$tmp/places-pg"
    timed import-osm-pg env -C "$tmp" -u DATA_DIR DATABASE_URL="$places_db" LOG_LEVEL=warning \
      "$bin" import osm "$osm_file" --data-dir "$tmp/places-pg"
    start_server "$tmp/places-pg" DATABASE_URL="$places_db"
    bench places-pg-cold "$BENCH_LATENCY_CONNECTIONS" -s "$root/bench/paths.lua" "$url" -- "$points_file"
    wrk -t "$BENCH_THREADS" -c "$BENCH_LATENCY_CONNECTIONS" -d "$BENCH_PLACES_WARMUP" -s "$root/bench/paths.lua" \
      "$url" -- "$points_file" >/dev/null
    bench places-pg-health "$BENCH_LATENCY_CONNECTIONS" "$url/health"
    bench places-pg "$BENCH_LATENCY_CONNECTIONS" -s "$root/bench/paths.lua" "$url" -- "$points_file"
    stop_server
    start_server "$tmp/places-pg" DATABASE_URL="$places_db" NEARBY_CACHE_PLACES=0
    bench places-pg-db "$BENCH_LATENCY_CONNECTIONS" -s "$root/bench/paths.lua" "$url" -- "$points_file"
    stop_server
    pg_stop
    rm -rf "$tmp/pg"
    pg_port="" pg_data=""
  fi
  section "places: results"
  {
    echo "## nearby places ($BENCH_OSM_PLACES places around $BENCH_OSM_CITIES cities, radius $BENCH_RADIUS m)"
    if [ -n "$osm_secs" ]; then
      printf 'tonight import osm: %s s for %s MB (%s MB/s, %s places/s), peak RSS %s MB\n' "$osm_secs" "$osm_mb" \
        "$(ratio "$osm_mb" "$osm_secs")" \
        "$(awk -v n="$BENCH_OSM_PLACES" -v s="$osm_secs" 'BEGIN { printf "%.0f", n / s }')" "$osm_peak"
      if [ "$(verdict "$osm_secs" "<" 300)" != met ]; then echo "WARNING: the osm import took longer than 5 minutes"; fi
    fi
    table places-health places-cold places places-health-1 places-1 places-db
    printf 'ratio places/health = %s (%s connections, warm; goal >= 0.30: %s), %s (1 connection)\n' \
      "$(ratio "$(rps places)" "$(rps places-health)")" "$BENCH_LATENCY_CONNECTIONS" \
      "$(verdict "$(ratio "$(rps places)" "$(rps places-health)")" ">=" 0.30)" \
      "$(ratio "$(rps places-1)" "$(rps places-health-1)")"
    printf 'cold (the first %s after start): %s of /health, p99 %s ms; every search from the database: %s, p99 %s ms\n' \
      "$BENCH_DURATION" "$(ratio "$(rps places-cold)" "$(rps places-health)")" "$(p99 places-cold)" \
      "$(ratio "$(rps places-db)" "$(rps places-health)")" "$(p99 places-db)"
    if [ -f "$out/places-pg.txt" ]; then
      table places-pg-health places-pg-cold places-pg places-pg-db
      printf 'PostgreSQL (import %s s): places/health = %s warm (goal >= 0.30: %s), p99 %s ms (goal < 10 ms: %s); cold %s, p99 %s ms; every search from the database %s, p99 %s ms\n' \
        "$(awk -F': ' '/Elapsed/ { print $2 }' "$out/import-osm-pg.time")" \
        "$(ratio "$(rps places-pg)" "$(rps places-pg-health)")" \
        "$(verdict "$(ratio "$(rps places-pg)" "$(rps places-pg-health)")" ">=" 0.30)" "$(p99 places-pg)" \
        "$(verdict "$(p99 places-pg)" "<" 10)" "$(ratio "$(rps places-pg-cold)" "$(rps places-pg-health)")" \
        "$(p99 places-pg-cold)" "$(ratio "$(rps places-pg-db)" "$(rps places-pg-health)")" "$(p99 places-pg-db)"
    fi
    printf 'places p99 = %s ms with %s connections (goal < 10 ms: %s), %s ms for one client (%s)\n\n' \
      "$(p99 places)" "$BENCH_LATENCY_CONNECTIONS" "$(verdict "$(p99 places)" "<" 10)" \
      "$(p99 places-1)" "$(verdict "$(p99 places-1)" "<" 10)"
  } | tee -a "$out/summary.txt"
  check_errors places-health places-cold places places-health-1 places-1 places-db
  if [ -f "$out/places-pg.txt" ]; then check_errors places-pg-health places-pg-cold places-pg places-pg-db; fi
fi
