-- wrk script: PATCH {"value":"80%"} by id, or POST by key, rotating over the seeded statuses;
-- or GET of prepared request paths (list and history pages with their cursors); `public`: GET
-- without a key, each line `path` or `path<TAB>etag` (sent as If-None-Match).
-- BENCH_MODE=patch|post|get|public, BENCH_IDS=<file of ids, keys or paths, one a line>, BENCH_KEY=<api key>
local mode = os.getenv("BENCH_MODE") or "patch"
local key = os.getenv("BENCH_KEY")
local targets = {}
for line in io.lines(os.getenv("BENCH_IDS")) do targets[#targets + 1] = line end
local headers = { ["service-api-key"] = key, ["content-type"] = "application/json" }
local get_headers = { ["service-api-key"] = key }
local body = '{"value":"80%"}'
local i = 0
-- public reads: each request built once, so wrk spends its time sending, not formatting
local public_requests = {}

function init(args)
  -- each wrk thread starts at its own offset so threads do not walk in step
  i = math.random(#targets)
  -- note: here, not at load: wrk.format adds the Host header, which wrk sets before init
  if mode == "public" then
    for n, line in ipairs(targets) do
      local path, etag = line:match("^([^\t]*)\t(.*)$")
      if path then
        public_requests[n] = wrk.format("GET", path, { ["if-none-match"] = etag })
      else
        public_requests[n] = wrk.format("GET", line)
      end
    end
  end
end

function request()
  i = i + 1
  local target = targets[(i % #targets) + 1]
  if mode == "get" then
    return wrk.format("GET", target, get_headers)
  end
  if mode == "public" then
    return public_requests[(i % #targets) + 1]
  end
  if mode == "post" then
    return wrk.format("POST", "/v1/status-keys/" .. target, headers, body)
  end
  return wrk.format("PATCH", "/v1/status/" .. target, headers, body)
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'BENCH_RESULT {"requests":%d,"duration_us":%d,"socket_errors":%d,"non2xx":%d,"p50_us":%d,"p99_us":%d}\n',
    summary.requests, summary.duration, e.connect + e.read + e.write + e.timeout, e.status,
    latency:percentile(50), latency:percentile(99)))
end
