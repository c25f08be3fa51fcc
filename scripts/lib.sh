# shellcheck shell=bash
# Helpers shared by scripts/test and bench/run; sourced by them (after their `set -euo pipefail`),
# never run. Globals they use: tmp (the run's temp dir, removed on exit), started_pids (background
# processes stopped on exit), pg_bin, pg_data, pg_sock, pg_port (the throwaway PostgreSQL cluster)
# and lib_style.

# lib_style=bold (scripts/test): bold section headers, a blank line before ERROR.
# lib_style=plain (bench/run): plain section headers, ERROR right after the last line.
lib_style=bold

# ---------------------------------------------------------------------------------------------
# Output. Section headers; each also closes the previous step's timer (print_timings shows them).
# ---------------------------------------------------------------------------------------------
script_started=$(date +%s)
step_names=()
step_secs=()
step_name=""
step_started=$script_started
end_step() {
  if [ -n "$step_name" ]; then
    step_names+=("$step_name")
    step_secs+=($(($(date +%s) - step_started)))
  fi
  step_name=""
}
section() {
  end_step
  step_name=$*
  step_started=$(date +%s)
  if [ "$lib_style" = plain ]; then
    printf '\n==== %s ====\n' "$*"
  else
    printf '\n\033[1m==== %s ====\033[0m\n' "$*"
  fi
}
print_timings() {
  end_step
  printf '\n==== Timings ====\n'
  local i
  for i in "${!step_names[@]}"; do printf '  %5d s  %s\n' "${step_secs[$i]}" "${step_names[$i]}"; done
  printf '  %5d s  total\n' $(($(date +%s) - script_started))
}
note() { printf '  %s\n' "$*"; }
die() {
  if [ "$lib_style" = plain ]; then printf 'ERROR: %s\n' "$*" >&2; else printf '\nERROR: %s\n' "$*" >&2; fi
  exit 1
}
now() { date +%s; }

# apt_install PACKAGE…: apt-get update, then install without recommends (through sudo unless root).
if [ "$(id -u)" -eq 0 ]; then SUDO=(); else SUDO=(sudo); fi
apt_install() {
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@"
}

# ---------------------------------------------------------------------------------------------
# Processes: everything in started_pids, the PostgreSQL cluster and $tmp go away on exit.
# ---------------------------------------------------------------------------------------------
tmp=""
started_pids=()

# trap_exit FUNCTION: runs FUNCTION however the script ends (INT and TERM exit with 130 and 143).
trap_exit() {
  # shellcheck disable=SC2064 # the function's name is meant to be expanded now
  trap "$1" EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
}

# stop_pid PID: SIGTERM, up to 5 s to exit, then SIGKILL; reaps it.
stop_pid() {
  local pid=$1
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  wait "$pid" 2>/dev/null || true
}

# stop_started: stops every process in started_pids and the PostgreSQL cluster, removes $tmp.
stop_started() {
  local pid
  for pid in "${started_pids[@]}"; do stop_pid "$pid"; done
  pg_stop
  if [ -n "$tmp" ] && [ -d "$tmp" ]; then rm -rf "$tmp"; fi
}

# A port nobody listens on (best effort; callers retry on a clash).
free_port() {
  local port
  for _ in $(seq 200); do
    # Below Linux's ephemeral range (32768+), where the many client connections of the tests
    # (and the cluster check) take their local ports: a listener there could find its port taken.
    port=$((20000 + RANDOM % 12000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port"
      return 0
    fi
  done
  die "no free TCP port found"
}

# wait_healthy URL PID SECONDS: polls GET URL/health until it answers 200 (returns 0), PID exits
# (returns 1) or SECONDS pass (returns 2).
wait_healthy() {
  local url=$1 pid=$2 deadline
  deadline=$(($(now) + $3))
  while [ "$(now)" -lt "$deadline" ]; do
    kill -0 "$pid" 2>/dev/null || return 1
    if [ "$(curl -s -o /dev/null -w '%{http_code}' "$url/health" || true)" = 200 ]; then return 0; fi
    sleep 0.25
  done
  kill -0 "$pid" 2>/dev/null || return 1
  return 2
}

# venv_install VENV SPEC…: pip-installs SPECs into the virtualenv VENV, creating it when missing.
venv_install() {
  local venv=$1
  shift
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check "$@"
}

# ---------------------------------------------------------------------------------------------
# A throwaway PostgreSQL cluster in $tmp/pg: 127.0.0.1, a free port, trust auth.
# ---------------------------------------------------------------------------------------------
pg_bin=""
pg_data=""
pg_sock=""
pg_port=""

find_pg_bin() {
  local dir
  dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
  if [ -n "$dir" ] && [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ]; then echo "$dir"; fi
}

as_pg() {
  # initdb/postgres refuse to run as root: use the `postgres` OS user then.
  if [ "$(id -u)" -eq 0 ]; then
    (cd "$tmp" && runuser -u postgres -- env LC_ALL=C LANG=C "$@")
  else
    env LC_ALL=C LANG=C "$@"
  fi
}

# pg_start LOG_DIR SETTINGS: initdb (its log in LOG_DIR/initdb.log) and start the cluster on a free
# port (five tries) with the extra server SETTINGS ("-c name=value …"). Sets pg_bin (when unset),
# pg_data, pg_sock and pg_port.
pg_start() {
  local log_dir=$1 settings=$2 port
  [ -n "$pg_bin" ] || pg_bin=$(find_pg_bin)
  [ -n "$pg_bin" ] || die "PostgreSQL server binaries not found under /usr/lib/postgresql/*/bin"
  chmod 755 "$tmp"
  pg_data="$tmp/pg/data"
  pg_sock="$tmp/pg/sock"
  mkdir -p "$pg_data" "$pg_sock"
  chmod 700 "$pg_data"
  if [ "$(id -u)" -eq 0 ]; then
    id postgres >/dev/null 2>&1 || die "running as root needs the 'postgres' OS user (from the postgresql package)"
    chown -R postgres: "$tmp/pg"
  fi
  as_pg "$pg_bin/initdb" -D "$pg_data" -U postgres --auth=trust --no-locale -E UTF8 --no-sync >"$log_dir/initdb.log" 2>&1 ||
    { cat "$log_dir/initdb.log" >&2; die "initdb failed"; }
  pg_port=""
  for _ in 1 2 3 4 5; do
    port=$(free_port)
    if as_pg "$pg_bin/pg_ctl" -D "$pg_data" -l "$tmp/pg/server.log" -w -t 60 start -o \
      "-c listen_addresses=127.0.0.1 -p $port -c unix_socket_directories=$pg_sock $settings" \
      >/dev/null 2>&1; then
      pg_port=$port
      return 0
    fi
    note "PostgreSQL did not start on port $port, trying another"
  done
  cat "$tmp/pg/server.log" >&2
  die "PostgreSQL did not start"
}

# pg_createdb NAME: a database in the running cluster.
pg_createdb() { as_pg "$pg_bin/createdb" -h 127.0.0.1 -p "$pg_port" -U postgres "$1"; }

pg_stop() {
  if [ -n "$pg_data" ] && [ -f "$pg_data/postmaster.pid" ]; then
    as_pg "$pg_bin/pg_ctl" -D "$pg_data" -m immediate -w stop >/dev/null 2>&1 || true
  fi
}

# unfinished_tests LOG: the tests a swift test log shows started and not ended.
unfinished_tests() {
  python3 - "$1" <<'PY' || true
import re, sys
started, done = [], set()
for line in open(sys.argv[1], errors="replace"):
    m = re.match(r'.*◇ Test (".*?"|\S+\(.*?\)) started\.', line)
    if m: started.append(m.group(1))
    m = re.match(r'.*[✔✘] Test (".*?"|\S+\(.*?\)) .*(passed|failed) after', line)
    if m: done.add(m.group(1))
print("unfinished tests:", *[t for t in started if t not in done], sep="\n  ")
PY
}

# ---------------------------------------------------------------------------------------------
# swift_test_watched ARGS…: `swift test ARGS…`, watched for a stall. The whole suite prints steadily
# and ends in about four minutes; on 2026-11-26 runs stopped instead: no output, every thread of
# the test process idle (a database deadline that waited for the driver; see CONTRIBUTING.md).
# A run silent for SWIFT_TEST_SILENCE seconds (default 420) is taken to have stalled: its threads'
# stacks are kept in $tmp/stalled-stacks-N.txt (with gdb) and their top frames printed, its
# unfinished tests are listed, it is killed, and the suite runs once more. A run that fails is
# never repeated, and a second stall fails. A crash repeats the crashed thread's stack and the
# unfinished tests at the end, where CI's excerpt of the log shows them.
# ---------------------------------------------------------------------------------------------
swift_test_watched() {
  local silence=${SWIFT_TEST_SILENCE:-420} log="$tmp/swift-test.log" attempt pid status xctest
  for attempt in 1 2; do
    : >"$log"
    # Line-buffered (stdbuf reaches the test process through LD_PRELOAD): a process that stops
    # would otherwise keep its last lines in a buffer, and the unfinished tests listed below
    # would be wrong.
    stdbuf -oL -eL swift test "$@" > >(tee -a "$log") 2>&1 &
    pid=$!
    status=""
    while kill -0 "$pid" 2>/dev/null; do
      sleep 5
      if [ $(($(now) - $(stat -c %Y "$log"))) -ge "$silence" ]; then
        xctest=$(pgrep -f 'PackageTests.xctest' | head -n 1 || true)
        note "swift test printed nothing for ${silence} s: stalled (attempt $attempt)"
        if [ -n "$xctest" ] && command -v gdb >/dev/null 2>&1; then
          timeout 120 gdb -p "$xctest" -batch -ex 'thread apply all bt 20' >"$tmp/stalled-stacks-$attempt.txt" 2>&1 || true
          note "its threads' stacks: $tmp/stalled-stacks-$attempt.txt (the top frames of each:)"
          # In the log too, where CI shows it: each thread's name and its six innermost frames.
          awk '/^Thread /{print; n=0; next} /^#/{if (n++ < 6) print "   " substr($0, 1, 150)}' \
            "$tmp/stalled-stacks-$attempt.txt" || true
        fi
        unfinished_tests "$log"
        [ -z "$xctest" ] || kill -9 "$xctest" 2>/dev/null || true
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
        status=stalled
        break
      fi
    done
    if [ "$status" != stalled ]; then
      wait "$pid" && return 0
      status=$?
      # A crash prints every thread's stack, and CI shows only the end of the log: repeat the
      # crashed thread and the tests that were running below them.
      if grep -q '^\*\*\* Program crashed' "$log"; then
        note "the test process crashed:"
        grep -m1 '^\*\*\* Program crashed' "$log"
        awk '/^Thread .* crashed:/{p=1} p&&/^$/{if (++blank == 2) exit} p{print "   " substr($0, 1, 160)}' "$log" | head -n 40
        unfinished_tests "$log"
      fi
      return $status
    fi
  done
  die "swift test stalled twice"
}
