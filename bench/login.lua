-- wrk script: POST /v1/auth/login with the bench account (bench/run sets the env vars).
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = string.format('{"username":"%s","password":"%s"}',
  os.getenv("BENCH_USERNAME") or "bench",
  os.getenv("BENCH_PASSWORD") or "bench passphrase, long enough")
