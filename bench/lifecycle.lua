-- wrk script: complete order lifecycles (placed -> started -> ready -> picked_up) through Crema's HTTP API.
--
-- Environment (read in every wrk thread):
--   POS_KEY, BARISTA_KEY   bearer keys for the pos and barista roles (required)
--   STORES                 number of stores s1..sN to spread orders over (default 8)
--   RUN_ID                 prefix that keeps Idempotency-Keys unique across runs (default: the clock)
--
-- How lifecycles map onto connections: wrk calls request() when a connection can send and response() when
-- an answer arrives, but does not say which connection either call is for. So each thread keeps a queue of
-- "next steps": response() reads the order id and state from the answer (every 2xx answer is the order) and
-- queues that order's next event; request() sends the oldest queued step, or places a new order when the
-- queue is empty. Every connection always has exactly one request in flight, every order's events are
-- sent strictly one after the other (the next one only after the previous one's 2xx), and the number of
-- lifecycles in progress equals the number of connections -- a fixed concurrency of complete lifecycles.
--
-- Any non-2xx answer is counted (by status) and printed in done(); the order it belonged to is abandoned.
-- A run with any non-2xx answer is a failed run (bench/ingest.sh checks the "non2xx" line).

local threads = {}
local next_thread_id = 1

function setup(thread)
  thread:set("tid", next_thread_id)
  next_thread_id = next_thread_id + 1
  table.insert(threads, thread)
end

local pos_auth, barista_auth, stores, run_id, eta
local counter = 0
local queue, head, tail = {}, 1, 0
-- Counters read by done() through thread:get.
non2xx = 0
statuses = {}
lifecycles = 0
unparsed = 0

local next_event = {
  queued = { body = '{"type":"started","barista":"Sam"}', role = "barista" },
  preparing = { body = '{"type":"ready"}', role = "barista" },
  ready = { body = '{"type":"picked_up"}', role = "pos" },
}

function init(args)
  pos_auth = "Bearer " .. assert(os.getenv("POS_KEY"), "POS_KEY is not set")
  barista_auth = "Bearer " .. assert(os.getenv("BARISTA_KEY"), "BARISTA_KEY is not set")
  stores = tonumber(os.getenv("STORES") or "8")
  run_id = os.getenv("RUN_ID") or tostring(os.time())
  -- Ten minutes ahead: inside the API's 24-hour window for the whole run.
  eta = os.date("!%Y-%m-%dT%H:%M:%SZ", os.time() + 600)
end

local function key()
  counter = counter + 1
  return run_id .. "-t" .. tid .. "-" .. counter
end

function request()
  local k = key()
  if head <= tail then
    local step = queue[head]
    queue[head] = nil
    head = head + 1
    local auth = step.role == "pos" and pos_auth or barista_auth
    return wrk.format("POST", "/v1/orders/" .. step.id .. "/events", {
      ["Authorization"] = auth,
      ["Content-Type"] = "application/json",
      ["Idempotency-Key"] = k,
    }, step.body)
  end
  local store = "s" .. (counter % stores + 1)
  local body = '{"store_id":"' .. store .. '","pos_ref":"T-' .. k .. '","customer_ref":"c-' .. counter ..
    '","display_name":"Ana","locale":"en","items":[{"name":"Latte","quantity":1}],"eta":"' .. eta .. '"}'
  return wrk.format("POST", "/v1/orders", {
    ["Authorization"] = pos_auth,
    ["Content-Type"] = "application/json",
    ["Idempotency-Key"] = k,
  }, body)
end

function response(status, headers, body)
  if status < 200 or status > 299 then
    non2xx = non2xx + 1
    local s = tostring(status)
    statuses[s] = (statuses[s] or 0) + 1
    return
  end
  local id = body and string.match(body, '"id":"([^"]+)"')
  local state = body and string.match(body, '"state":"([^"]+)"')
  if not id or not state then
    unparsed = unparsed + 1
    return
  end
  local step = next_event[state]
  if step then
    tail = tail + 1
    queue[tail] = { id = id, body = step.body, role = step.role }
  elseif state == "picked_up" then
    lifecycles = lifecycles + 1
  end
end

function done(summary, latency, requests)
  local total_non2xx, total_lifecycles, total_unparsed = 0, 0, 0
  local by_status = {}
  for _, thread in ipairs(threads) do
    total_non2xx = total_non2xx + (thread:get("non2xx") or 0)
    total_lifecycles = total_lifecycles + (thread:get("lifecycles") or 0)
    total_unparsed = total_unparsed + (thread:get("unparsed") or 0)
    for s, n in pairs(thread:get("statuses") or {}) do by_status[s] = (by_status[s] or 0) + n end
  end
  local seconds = summary.duration / 1e6
  io.write("-- lifecycle.lua summary --\n")
  io.write(string.format("requests %d\n", summary.requests))
  io.write(string.format("seconds %.3f\n", seconds))
  io.write(string.format("events_per_s %.1f\n", summary.requests / seconds))
  io.write(string.format("lifecycles_completed %d\n", total_lifecycles))
  io.write(string.format("latency_p50_ms %.3f\n", latency:percentile(50) / 1000))
  io.write(string.format("latency_p90_ms %.3f\n", latency:percentile(90) / 1000))
  io.write(string.format("latency_p99_ms %.3f\n", latency:percentile(99) / 1000))
  io.write(string.format("latency_max_ms %.3f\n", latency.max / 1000))
  io.write(string.format("socket_errors connect=%d read=%d write=%d timeout=%d\n", summary.errors.connect,
    summary.errors.read, summary.errors.write, summary.errors.timeout))
  io.write(string.format("unparsed_2xx %d\n", total_unparsed))
  io.write(string.format("non2xx %d\n", total_non2xx))
  for s, n in pairs(by_status) do io.write(string.format("  status %s: %d\n", s, n)) end
end
