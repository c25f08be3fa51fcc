# shellcheck shell=bash
# bench/run section uploads (sourced by bench/run).

if want uploads; then
  section "uploads: a ${BENCH_UPLOAD_MB} MB clip over tus against one POST /v1/posts"
  upload_data="$tmp/uploads-data"
  # No job worker: only the upload itself is timed, not the media processing it queues.
  BENCH_BCRYPT_COST=4 start_server "$upload_data" JOBS_ENABLED=false
  file="$tmp/upload.mp4"
  # An MP4's ftyp box, then noise: the server reads the container from the first bytes.
  { printf '\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom'; head -c $((BENCH_UPLOAD_MB * 1048576 - 24)) /dev/urandom; } >"$file"
  size=$(stat -c %s "$file")
  mkdir -p "$tmp/chunks"
  split -b "${BENCH_UPLOAD_CHUNK_MB}M" -d -a 3 "$file" "$tmp/chunks/part"
  token=$(curl -sS -X POST "$url/v1/auth/signup" -H 'Content-Type: application/json' \
    -d '{"username":"uploader","email":"uploader@example.com","password":"a long enough passphrase"}' |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["accessToken"])')
  city=$(printf 'Halifax$Nova Scotia$CA' | base64 -w0)
  # No "Expect: 100-continue": curl would wait a second for a 100 the server does not send (browsers
  # and the SDKs never ask for one).
  auth=(-H "Authorization: Bearer $token" -H "Expect:")
  tus=(-H "Tus-Resumable: 1.0.0")
  # Each prints the seconds it took, start to answer.
  post_once() {
    local start end status
    start=$(date +%s.%N)
    status=$(curl -sS -o /dev/null -w '%{http_code}' "${auth[@]}" -F 'city=Halifax$Nova Scotia$CA' \
      -F "media=@$file;type=video/mp4" "$url/v1/posts")
    end=$(date +%s.%N)
    [ "$status" = 201 ] || die "uploads: POST /v1/posts answered $status"
    awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f", b - a }'
  }
  tus_once() { # tus_once FILE…: creation, then one PATCH per file
    local start end location offset=0 part status
    start=$(date +%s.%N)
    location=$(curl -sS -o /dev/null -D - -X POST "${auth[@]}" "${tus[@]}" -H "Upload-Length: $size" \
      -H "Upload-Metadata: city $city" "$url/v1/uploads" | tr -d '\r' | sed -n 's/^[Ll]ocation: //p')
    [ -n "$location" ] || die "uploads: tus creation failed"
    # One curl for all the PATCHes (--next), on one kept-alive connection, as a client app would.
    local args=()
    for part in "$@"; do
      [ ${#args[@]} -eq 0 ] || args+=(--next)
      args+=(-sS -o /dev/null -w '%{http_code}\n' -X PATCH "${auth[@]}" "${tus[@]}" -H "Upload-Offset: $offset"
        -H 'Content-Type: application/offset+octet-stream' --data-binary "@$part" "$url$location")
      offset=$((offset + $(stat -c %s "$part")))
    done
    status=$(curl "${args[@]}" | sort -u | tr '\n' ' ')
    [ "$status" = "204 " ] || die "uploads: PATCHes answered $status"
    end=$(date +%s.%N)
    awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f", b - a }'
  }
  post_times=() whole_times=() chunk_times=()
  for _ in $(seq 1 "$BENCH_UPLOAD_RUNS"); do # alternated, so drift hits all three alike
    post_times+=("$(post_once)")
    whole_times+=("$(tus_once "$file")")
    # shellcheck disable=SC2046
    chunk_times+=("$(tus_once $(ls "$tmp"/chunks/part* | sort))")
  done
  stop_server
  median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
  mbps() { awk -v s="$size" -v t="$1" 'BEGIN { printf "%.1f", s / 1048576 / t }'; }
  post_mbps=$(mbps "$(median "${post_times[@]}")")
  whole_mbps=$(mbps "$(median "${whole_times[@]}")")
  chunk_mbps=$(mbps "$(median "${chunk_times[@]}")")
  section "uploads: results"
  {
    echo "## uploads (${BENCH_UPLOAD_MB} MB, median of ${BENCH_UPLOAD_RUNS} alternating runs, one client, SQLite, local media)"
    printf 'POST /v1/posts (multipart)         %6s MB/s   runs: %s s\n' "$post_mbps" "${post_times[*]}"
    printf 'tus, creation + one PATCH          %6s MB/s   runs: %s s\n' "$whole_mbps" "${whole_times[*]}"
    printf 'tus, creation + %s MB PATCHes       %6s MB/s   runs: %s s\n' "$BENCH_UPLOAD_CHUNK_MB" "$chunk_mbps" "${chunk_times[*]}"
    for kind in whole chunk; do
      value=$([ "$kind" = whole ] && echo "$whole_mbps" || echo "$chunk_mbps")
      printf 'ratio tus (%s)/POST = %s (goal >= 0.80: %s)\n' "$kind" "$(ratio "$value" "$post_mbps")" \
        "$(verdict "$(ratio "$value" "$post_mbps")" ">=" 0.80)"
    done
    echo
  } | tee -a "$out/summary.txt"
fi
