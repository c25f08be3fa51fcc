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
  bench places-health "$BENCH_LATENCY_CONNECTIONS" "$url/health"
  bench places "$BENCH_LATENCY_CONNECTIONS" -s "$root/bench/paths.lua" "$url" -- "$points_file"
  # One client's requests one after another: the latency of the search itself, without queueing.
  bench places-health-1 1 "$url/health"
  bench places-1 1 -s "$root/bench/paths.lua" "$url" -- "$points_file"
  stop_server
  section "places: results"
  {
    echo "## nearby places ($BENCH_OSM_PLACES places around $BENCH_OSM_CITIES cities, radius $BENCH_RADIUS m)"
    if [ -n "$osm_secs" ]; then
      printf 'tonight import osm: %s s for %s MB (%s MB/s, %s places/s), peak RSS %s MB\n' "$osm_secs" "$osm_mb" \
        "$(ratio "$osm_mb" "$osm_secs")" \
        "$(awk -v n="$BENCH_OSM_PLACES" -v s="$osm_secs" 'BEGIN { printf "%.0f", n / s }')" "$osm_peak"
      if [ "$(verdict "$osm_secs" "<" 300)" != met ]; then echo "WARNING: the osm import took longer than 5 minutes"; fi
    fi
    table places-health places places-health-1 places-1
    printf 'ratio places/health = %s (%s connections), %s (1 connection)\n' \
      "$(ratio "$(rps places)" "$(rps places-health)")" "$BENCH_LATENCY_CONNECTIONS" \
      "$(ratio "$(rps places-1)" "$(rps places-health-1)")"
    printf 'places p99 = %s ms with %s connections (goal < 10 ms: %s), %s ms for one client (%s)\n\n' \
      "$(p99 places)" "$BENCH_LATENCY_CONNECTIONS" "$(verdict "$(p99 places)" "<" 10)" \
      "$(p99 places-1)" "$(verdict "$(p99 places-1)" "<" 10)"
  } | tee -a "$out/summary.txt"
  check_errors places-health places places-health-1 places-1
fi
