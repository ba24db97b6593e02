-- Appended to a wrk script whose wrk.body holds "uid":"1": each request gets a workflow uid
-- of its own, unique across runs too (wrk passes the run's number after `--` to init), so
-- that serve answers none from the outcomes another request left in its table. Used by
-- bench/http_bench.sh and bench/bulkhead_bench.sh.
local threads = 0
function setup(thread) threads = threads + 1; thread:set("tid", threads) end
local prefix = ""
function init(args) prefix = (args[1] or "") .. "-" .. tid end
local n = 0
function request()
  n = n + 1
  return wrk.format(nil, nil, nil, (wrk.body:gsub('"uid":"1"', '"uid":"' .. prefix .. '-' .. n .. '"')))
end
