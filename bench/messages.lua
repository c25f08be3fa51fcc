-- wrk script: POST chat messages flat out, as many members into their conversations, round robin
-- over the lines of a file, each "TOKEN CONVERSATION_ID"; every text is unique ("w<thread>-<n>"),
-- so the sockets can count each message's arrival once. With "anonymous", the same posts carry no
-- token, so the server answers 401 before any work: the floor of a posted message.
-- Usage: wrk … -s bench/messages.lua URL -- PAIRS_FILE [anonymous]
-- Prints one JSON line when done: requests, status errors, seconds, p50/p99 of the POSTs in ms.
local lines = {}
local counter = 0
local threads = 0
local sent = 0
local anonymous = false
local prefix = "w0-"

function setup(thread)
  thread:set("offset", threads)
  threads = threads + 1
end

function init(args)
  for line in io.lines(args[1] or error("usage: -- PAIRS_FILE [anonymous]")) do
    local token, conversation = line:match("^(%S+) (%S+)$")
    if token then lines[#lines + 1] = { token, conversation } end
  end
  if #lines == 0 then error("no pairs in " .. args[1]) end
  anonymous = args[2] == "anonymous"
  counter = ((tonumber(offset) or 0) * 7919) % #lines
  prefix = "w" .. tostring(offset or 0) .. "-"
end

function request()
  counter = counter % #lines + 1
  sent = sent + 1
  local headers = { ["Content-Type"] = "application/json" }
  if not anonymous then headers["Authorization"] = "Bearer " .. lines[counter][1] end
  return wrk.format("POST", "/v1/conversations/" .. lines[counter][2] .. "/messages", headers,
    '{"text":"' .. prefix .. sent .. '"}')
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '{"requests": %d, "status_errors": %d, "socket_errors": %d, "seconds": %.3f, "p50_ms": %.2f, "p99_ms": %.2f}\n',
    summary.requests, e.status, e.connect + e.read + e.write + e.timeout, summary.duration / 1e6,
    latency:percentile(50) / 1000, latency:percentile(99) / 1000))
end
