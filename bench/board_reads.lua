-- wrk script: dashboard reads of the stores' boards (GET /v1/stores/sN/board), round robin over the stores.
--
-- Environment: DASHBOARD_KEY (required), STORES (default 8).
-- Prints a summary like lifecycle.lua's; a run with any non-2xx answer is a failed run (bench/read-replica.sh checks).

local threads = {}
function setup(thread) table.insert(threads, thread) end

local auth, stores
local counter = 0
non2xx = 0
bytes = 0

function init(args)
  auth = "Bearer " .. assert(os.getenv("DASHBOARD_KEY"), "DASHBOARD_KEY is not set")
  stores = tonumber(os.getenv("STORES") or "8")
end

function request()
  counter = counter + 1
  return wrk.format("GET", "/v1/stores/s" .. (counter % stores + 1) .. "/board", { ["Authorization"] = auth })
end

function response(status, headers, body)
  if status < 200 or status > 299 then non2xx = non2xx + 1 end
  bytes = bytes + #body
end

function done(summary, latency, requests)
  local total_non2xx, total_bytes = 0, 0
  for _, thread in ipairs(threads) do
    total_non2xx = total_non2xx + (thread:get("non2xx") or 0)
    total_bytes = total_bytes + (thread:get("bytes") or 0)
  end
  local seconds = summary.duration / 1e6
  io.write("-- board_reads.lua summary --\n")
  io.write(string.format("reads_per_s %.1f\n", summary.requests / seconds))
  io.write(string.format("read_bytes_avg %.0f\n", total_bytes / math.max(summary.requests, 1)))
  io.write(string.format("read_p50_ms %.3f\n", latency:percentile(50) / 1000))
  io.write(string.format("read_p99_ms %.3f\n", latency:percentile(99) / 1000))
  io.write(string.format("read_socket_errors %d\n", summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
  io.write(string.format("read_non2xx %d\n", total_non2xx))
end
