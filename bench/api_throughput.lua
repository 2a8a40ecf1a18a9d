-- wrk script for bench/api_throughput.py: method, headers and body from the environment,
-- a fresh Idempotency-Key per request when asked, and one JSON line of results at the end.
--
--   BENCH_METHOD       GET (default) or POST
--   BENCH_AUTH         the Authorization header value (none when empty)
--   BENCH_BODY         the request body (sent as application/json when set)
--   BENCH_IDEMPOTENCY  "1": a new UUID in Idempotency-Key on every request

local method = os.getenv("BENCH_METHOD") or "GET"
local auth = os.getenv("BENCH_AUTH") or ""
local body = os.getenv("BENCH_BODY")
local keyed = os.getenv("BENCH_IDEMPOTENCY") == "1"
if body == "" then body = nil end

local threads = {}
local counter = 0

function setup(thread)
  thread:set("tid", #threads + 1)
  table.insert(threads, thread)
end

function init(args)
  -- A run-unique stem (time and thread) and a counter: keys never repeat across runs.
  stem = string.format("%08x", (os.time() * 16 + tid) % 4294967296)
  math.randomseed(os.time() * 1000 + tid)
  salt = math.random(0, 65535)
end

function request()
  local headers = {}
  if auth ~= "" then headers["Authorization"] = auth end
  if body then headers["Content-Type"] = "application/json" end
  if keyed then
    counter = counter + 1
    headers["Idempotency-Key"] = string.format("%s-%04x-4%03x-8%03x-%012x",
      stem, salt, tid % 4096, math.random(0, 4095), counter)
  end
  return wrk.format(method, nil, headers, body)
end

function done(summary, latency, requests)
  local errors = summary.errors
  io.write(string.format(
    '{"requests": %d, "duration_us": %d, "p50_us": %d, "p99_us": %d, "non_2xx_3xx": %d, ' ..
    '"socket_errors": %d}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    errors.status, errors.connect + errors.read + errors.write + errors.timeout))
end
