-- wrk script: PUT /v1/posts/<id>/vote as many users, round robin over their tokens, each vote a
-- pseudo-random -1, 0 or +1 (so users keep changing their minds).
-- Usage: wrk … -s bench/votes.lua URL -- TOKENS_FILE POST_ID
local tokens = {}
local counter = 0
local threads = 0
local post = ""

function setup(thread)
  thread:set("offset", threads)
  threads = threads + 1
end

function init(args)
  for line in io.lines(args[1] or error("usage: -- TOKENS_FILE POST_ID")) do
    if line ~= "" then tokens[#tokens + 1] = line end
  end
  post = args[2] or error("usage: -- TOKENS_FILE POST_ID")
  counter = ((tonumber(offset) or 0) * 7919) % #tokens
  math.randomseed(1234 + (tonumber(offset) or 0))
end

function request()
  counter = counter % #tokens + 1
  local body = '{"value":' .. tostring(math.random(3) - 2) .. '}'
  return wrk.format("PUT", "/v1/posts/" .. post .. "/vote",
    { ["Authorization"] = "Bearer " .. tokens[counter], ["Content-Type"] = "application/json" }, body)
end
