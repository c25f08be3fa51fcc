# shellcheck shell=bash
# bench/run section reach (sourced by bench/run): mail and Web Push against Python baselines.

if want reach; then
  section "reach: ${BENCH_REACH_COUNT} mails to an SMTP server and ${BENCH_REACH_COUNT} Web Push messages, against Python"
  venv_install "$root/.venv" "aiosmtpd==1.4.6" "http_ece==1.2.1" "cryptography==50.0.2"
  py="$root/.venv/bin/python"
  mkdir -p "$tmp/reach-sink"
  "$py" "$root/Tests/Mail/smtp_sink.py" --dir "$tmp/reach-sink" >"$tmp/reach-sink.out" 2>"$out/reach-sink.log" &
  started_pids+=("$!")
  "$py" "$root/Tests/Push/push_service.py" >"$tmp/reach-push.out" 2>"$out/reach-push.log" &
  started_pids+=("$!")
  for file in reach-sink reach-push; do
    for _ in $(seq 1 200); do grep -q '^PORT ' "$tmp/$file.out" && break; sleep 0.1; done
    grep -q '^PORT ' "$tmp/$file.out" || die "reach: $file did not start"
  done
  sink_port=$(sed -n 's/^PORT //p' "$tmp/reach-sink.out")
  push_port=$(sed -n 's/^PORT //p' "$tmp/reach-push.out")
  BENCH_BCRYPT_COST=4 start_server "$tmp/reach-data" "SMTP_URL=smtp://127.0.0.1:$sink_port" \
    "WEB_PUSH_INSECURE_HOSTS=127.0.0.1" RATE_MAIL_PER_HOUR=0 RATE_PASSWORD_RESET_PER_HOUR=0
  "$py" "$root/bench/reach_load.py" --url "$url" --sink-port "$sink_port" --sink-dir "$tmp/reach-sink" \
    --push-url "http://127.0.0.1:$push_port" --count "$BENCH_REACH_COUNT" >"$out/reach.json" ||
    { failed=1; tail -n 30 "$out/server.log" >&2; }
  stop_server
  section "reach: results"
  if [ -s "$out/reach.json" ]; then
    "$py" - "$out/reach.json" <<'PY' | tee -a "$out/summary.txt"
import json, sys
f = json.load(open(sys.argv[1]))
print(f"## reach: {f['mail_count']} mails, {f['push_count']} Web Push messages")
print(f"mail    python smtplib {f['mail_python_per_message_ms']} ms/message; tonight {f['mail_tonight_per_message_ms']} ms/message "
      f"(queued to accepted p50 {f['mail_queued_to_accepted_p50_ms']} ms, p99 {f['mail_queued_to_accepted_p99_ms']} ms); "
      f"ratio python/tonight = {f['mail_python_per_message_ms'] / f['mail_tonight_per_message_ms']:.2f}")
print(f"push    python (http_ece + VAPID + POST) {f['push_python_per_message_ms']} ms/message; tonight {f['push_tonight_per_message_ms']} ms/message; "
      f"ratio python/tonight = {f['push_python_per_message_ms'] / f['push_tonight_per_message_ms']:.2f}")
print()
PY
  fi
  section "reach: Web Push encryption and signing per message, without the network"
  swift build -c release --product WebPushBench
  "$(swift build -c release --show-bin-path)/WebPushBench" "$BENCH_REACH_COUNT" >"$out/webpush-swift.json"
  "$py" "$root/bench/webpush_micro.py" "$BENCH_REACH_COUNT" >"$out/webpush-python.json"
  "$py" - "$out/webpush-swift.json" "$out/webpush-python.json" <<'PY' | tee -a "$out/summary.txt"
import json, sys
swift, python = (json.load(open(path)) for path in sys.argv[1:3])
print(f"## Web Push per message, µs (median of 5 rounds of {swift['count']})")
for part in ("encrypt", "sign", "both"):
    t, p = swift[f"{part}_us"], python[f"{part}_us"]
    print(f"{part:8} tonight {t:8.1f}   python (http_ece, cryptography) {p:8.1f}   ratio python/tonight = {p / t:.2f}")
# "both" is what a push costs Tonight: the VAPID token is signed once per push service and reused.
print(f"sign, the cached token Tonight reuses: {swift['cached_sign_us']:.2f} µs (a fresh signature above)")
print()
PY
fi
