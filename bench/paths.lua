-- wrk script: GET the request paths listed in a file, one a line, round robin; each thread starts at
-- a different line. Usage: wrk … -s bench/paths.lua URL -- PATHS_FILE
-- Or GET the URL's own path as many members, their bearer tokens listed in the file:
--   wrk … -s bench/paths.lua URL -- TOKENS_FILE tokens
local lines = {}
local tokens = false
local counter = 0
local threads = 0

function setup(thread)
  thread:set("offset", threads)
  threads = threads + 1
end

function init(args)
  local file = args[1] or error("usage: wrk -s paths.lua URL -- FILE [tokens]")
  tokens = args[2] == "tokens"
  for line in io.lines(file) do
    if line ~= "" then lines[#lines + 1] = line end
  end
  if #lines == 0 then error("nothing listed in " .. file) end
  counter = ((tonumber(offset) or 0) * 7919) % #lines
end

function request()
  counter = counter % #lines + 1
  if tokens then
    return wrk.format("GET", nil, { ["Authorization"] = "Bearer " .. lines[counter] })
  end
  return wrk.format("GET", lines[counter])
end
