#!/usr/bin/env bash
# PostgreSQL restart drill (docs/design.md §8 reliability): while crema serve is under load, stop PostgreSQL
# (`crema postgres stop`, a fast shutdown), keep it down for a while, start it again. Crema is not restarted.
# Measures how quickly requests fail during the outage (503 with Retry-After expected) and how soon after
# PostgreSQL is back requests succeed; then checks the journal of 2xx answers against order_events and runs
# scripts/check-consistency. Exits 1 when an acknowledged event is missing, the database is inconsistent,
# a request gets anything but 503 while PostgreSQL is down,
# crema died, or no request succeeded after the restart. The timings are measurements, not pass/fail.
#
# Usage: drills/pg-restart-drill.sh [-d LOAD_SECONDS] [-s STOP_AFTER_SECONDS] [-o OUTAGE_SECONDS] [-t THREADS]
#   defaults: -d 20 -s 5 -o 5 -t 4. Environment: CREMA_BIN, BENCH_PORT (default 18092).
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh

duration=20 stop_after=5 outage=5 threads=4
while getopts "d:s:o:t:" opt; do
  case "$opt" in
    d) duration=$OPTARG ;;
    s) stop_after=$OPTARG ;;
    o) outage=$OPTARG ;;
    t) threads=$OPTARG ;;
    *) sed -n '2,11p' "$0" >&2; exit 2 ;;
  esac
done
port=${BENCH_PORT:-18092}
CREMA=$(crema_bin)
stamp=$(date -u +%Y%m%dT%H%M%SZ)
out=bench/results/pg-restart-drill-$stamp
mkdir -p "$out"
out=$(cd "$out" && pwd)
cluster=$(mktemp -d /tmp/crema-drill.XXXXXX)
SERVE_PID="" CLIENT_PID=""

cleanup() {
  [ -n "$CLIENT_PID" ] && stop_pid "$CLIENT_PID" 5
  [ -n "$SERVE_PID" ] && stop_pid "$SERVE_PID"
  "$CREMA" postgres stop --dir "$cluster" > /dev/null 2>&1 || true
  rm -rf "$cluster"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
log() { echo "== $*" | tee -a "$out/run.log"; }
now() { date +%s.%N; }

log "fresh PostgreSQL cluster in $cluster; crema serve on 127.0.0.1:$port"
conninfo=$("$CREMA" postgres start --dir "$cluster" --database crema_drill 2> "$out/postgres-start.log" | tail -1)
CREMA_DATABASE_URL="$conninfo" LOG_LEVEL=warning "$CREMA" migrate > "$out/migrate.log" 2>&1
start_serve "$conninfo" "$port" 8 "$out/serve.log"
wait_ready "$port" 30
create_stores "$port" 8
serve_pid=$SERVE_PID

log "load: $threads client threads for ${duration}s"
timeout $((duration + 60)) python3 drills/drill_client.py load --port "$port" --pos-key "$BENCH_POS_KEY" \
  --barista-key "$BENCH_BARISTA_KEY" --journal "$out/journal.jsonl" --outcomes "$out/outcomes.jsonl" \
  --threads "$threads" --duration "$duration" --retry-pause 0.1 --run-id "pgdrill-$stamp" > "$out/client.txt" 2>&1 &
CLIENT_PID=$!

sleep "$stop_after"
stop_begin=$(now)
"$CREMA" postgres stop --dir "$cluster" >> "$out/postgres-start.log" 2>&1
stop_end=$(now)
log "PostgreSQL stopped (fast shutdown took $(python3 -c "print(f'{$stop_end - $stop_begin:.2f}')") s)"

# Probes during the outage: readiness and one write, with their timings and Retry-After.
sleep 1
for probe in 1 2 3; do
  curl -s -o /dev/null -m 10 -D - -w 'GET /health/ready -> %{http_code} in %{time_total} s\n' \
    "http://127.0.0.1:$port/health/ready" | grep -iE '^retry-after|->' | tr -d '\r' | tee -a "$out/run.log"
  curl -s -o "$out/outage-answer.json" -m 10 -D - -w 'POST /v1/orders -> %{http_code} in %{time_total} s\n' \
    -X POST "http://127.0.0.1:$port/v1/orders" -H "Authorization: Bearer $BENCH_POS_KEY" \
    -H "Idempotency-Key: probe-$stamp-$probe" -H 'Content-Type: application/json' \
    -d "{\"store_id\":\"s1\",\"pos_ref\":\"probe\",\"display_name\":\"Ana\",\"locale\":\"en\",\"items\":[{\"name\":\"Latte\",\"quantity\":1}],\"eta\":\"$(date -u -d '+10 min' +%Y-%m-%dT%H:%M:%SZ)\"}" \
    | grep -iE '^retry-after|->' | tr -d '\r' | tee -a "$out/run.log"
  sleep 0.5
done
echo "outage answer body: $(cat "$out/outage-answer.json")" | tee -a "$out/run.log"
sleep "$(python3 -c "print(max(0, $outage - ($(now) - $stop_end)))")"

start_begin=$(now)
"$CREMA" postgres start --dir "$cluster" --database crema_drill >> "$out/postgres-start.log" 2>&1
start_end=$(now)
log "PostgreSQL started again after an outage of $(python3 -c "print(f'{$start_end - $stop_begin:.2f}')") s"

wait "$CLIENT_PID" || { echo "drill client failed" >&2; cat "$out/client.txt" >&2; CLIENT_PID=""; exit 1; }
CLIENT_PID=""
log "client: $(cat "$out/client.txt")"

violations=0
if kill -0 "$serve_pid" 2>/dev/null; then log "crema serve (pid $serve_pid) still running, never restarted"; else
  log "VIOLATION: crema serve died"; violations=$((violations + 1)); fi

if python3 - "$out" "$stop_begin" "$stop_end" "$start_begin" "$start_end" <<'EOF' | tee -a "$out/run.log"; then :; else violations=$((violations + 1)); fi
import json, sys
out, stop_begin, stop_end, start_begin, up = sys.argv[1], *map(float, sys.argv[2:])
o = sorted((json.loads(l) for l in open(f"{out}/outcomes.jsonl")), key=lambda x: x["t"])
def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, -(-len(xs) * p // 100) - 1))] if xs else float("nan")
def describe(name, xs):
    by = {}
    for x in xs:
        k = x["error"] or x["status"]
        by[k] = by.get(k, 0) + 1
    lat = [x["latency_ms"] for x in xs]
    print(f"{name}: {len(xs)} requests {by}; latency ms p50 {pct(lat, 50):.1f} p99 {pct(lat, 99):.1f} max {max(lat, default=float('nan')):.1f}")
describe("before the stop", [x for x in o if x["t"] < stop_begin])
describe("during the shutdown", [x for x in o if stop_begin <= x["t"] < stop_end])
outage = [x for x in o if stop_end <= x["t"] < start_begin]
describe("while PostgreSQL was down", outage)
s503 = [x for x in outage if x["status"] == 503]
print(f"  503 answers with Retry-After: {sum(1 for x in s503 if x['retry_after'])}/{len(s503)}; values {sorted({x['retry_after'] for x in s503})}")
describe("during `crema postgres start`", [x for x in o if start_begin <= x["t"] < up])
describe("after `crema postgres start` returned", [x for x in o if x["t"] >= up])
first_ok = next((x for x in o if x["t"] >= start_begin and 200 <= x["status"] < 300), None)
print(f"`crema postgres start` took {up - start_begin:.2f} s; first 2xx answered " +
      (f"{first_ok['t'] + first_ok['latency_ms'] / 1000 - start_begin:.2f} s after it began" if first_ok else "NEVER"))
others = [x for x in outage if x["status"] != 503]
print(f"answers other than 503 while PostgreSQL was down: {len(others)}")
sys.exit(0 if first_ok and not others else 1)
EOF

log "every acknowledged event is in order_events"
verify_journal "$conninfo" "$out/journal.jsonl" "$out" | tee -a "$out/run.log" || violations=$((violations + 1))
scripts/check-consistency "$conninfo" > "$out/consistency.txt" 2>&1 || violations=$((violations + 1))
tail -1 "$out/consistency.txt" | tee -a "$out/run.log"
log "violations: $violations"
exit $((violations > 0))
