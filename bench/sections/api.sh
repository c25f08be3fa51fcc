# shellcheck shell=bash
# bench/run section api (sourced by bench/run; see its header).

if want api; then
  section "api: server"
  db_env=()
  storage="SQLite ($tmp/api-data)"
  if [ -n "$DATABASE_URL" ]; then
    db_env=("DATABASE_URL=$DATABASE_URL")
    storage="PostgreSQL (${DATABASE_URL%%\?*})"
    storage=$(printf '%s' "$storage" | sed -E 's#//([^:@/]*):[^@/]*@#//\1:***@#')
  fi
  start_server "$tmp/api-data" "${db_env[@]}"
  echo "tonight serve at $url, storage $storage, bcrypt cost $BENCH_BCRYPT_COST"

  # The account (signed up, or logged in when it already exists in a reused PostgreSQL database).
  token_from() { sed -n 's/.*"accessToken" *: *"\([^"]*\)".*/\1/p' "$1"; }
  status=$(curl -sS -o "$tmp/auth.json" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
    --data "{\"username\":\"$BENCH_USERNAME\",\"email\":\"bench@example.com\",\"password\":\"$BENCH_PASSWORD\"}" \
    "$url/v1/auth/signup")
  if [ "$status" = 409 ]; then
    status=$(curl -sS -o "$tmp/auth.json" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
      --data "{\"username\":\"$BENCH_USERNAME\",\"password\":\"$BENCH_PASSWORD\"}" "$url/v1/auth/login")
  fi
  case "$status" in 2??) ;; *) cat "$tmp/auth.json" >&2; die "could not sign up or log in ($status)" ;; esac
  token=$(token_from "$tmp/auth.json")
  [ -n "$token" ] || die "no accessToken in $(cat "$tmp/auth.json")"
  # The access token must outlive the run; fail early rather than measure 401s.
  me_status=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $token" "$url/v1/me")
  [ "$me_status" = 200 ] || die "GET /v1/me answered $me_status"

  bench health "$BENCH_CONNECTIONS" "$url/health"
  bench me "$BENCH_CONNECTIONS" -H "Authorization: Bearer $token" "$url/v1/me"
  bench login "$BENCH_LOGIN_CONNECTIONS" -s "$root/bench/login.lua" "$url/v1/auth/login"
  stop_server

  section "api: results ($storage)"
  {
    echo "## api ($storage)"
    table health me login
    printf 'ratio me/health = %s (goal ≥ 0.60)\n' "$(ratio "$(rps me)" "$(rps health)")"
    printf 'logins/s at bcrypt cost %s = %s\n\n' "$BENCH_BCRYPT_COST" "$(rps login)"
  } | tee -a "$out/summary.txt"
  check_errors health me login
fi
