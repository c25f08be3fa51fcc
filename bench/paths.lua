-- wrk script: GET the request paths listed in a file, one a line, round robin; each thread starts at
-- a different line. Usage: wrk … -s bench/paths.lua URL -- PATHS_FILE
local paths = {}
local counter = 0
local threads = 0

function setup(thread)
  thread:set("offset", threads)
  threads = threads + 1
end

function init(args)
  local file = args[1] or error("usage: wrk -s paths.lua URL -- PATHS_FILE")
  for line in io.lines(file) do
    if line ~= "" then paths[#paths + 1] = line end
  end
  if #paths == 0 then error("no request paths in " .. file) end
  counter = ((tonumber(offset) or 0) * 7919) % #paths
end

function request()
  counter = counter % #paths + 1
  return wrk.format("GET", paths[counter])
end
