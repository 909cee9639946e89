#!/usr/bin/env bash
# kill -9 drill (docs/design.md §8 reliability): `kill -9` of crema serve under load, then a restart. Checks that
#   (a) every event that got a 2xx is in order_events (order id + version + event type),
#   (b) scripts/check-consistency passes (no order in a state its events do not explain, no key without answer),
#   (c) the restarted server answers /health/ready 200, and requests acknowledged before the kill, sent again
#       with the same Idempotency-Key, replay the stored first answer (Idempotent-Replayed: true, same bytes).
# Exits 1 on any violation.
#
# Usage: drills/kill-drill.sh [-d LOAD_SECONDS] [-k KILL_AFTER_SECONDS] [-t CLIENT_THREADS]
#   defaults: -d 15 -k 5 -t 8. Environment: CREMA_BIN (default .build-release/release/crema),
#   BENCH_PORT (default 18091). Needs postgresql-15, curl, python3. Outputs: bench/results/kill-drill-<time>/.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh

duration=15 kill_after=5 threads=8
while getopts "d:k:t:" opt; do
  case "$opt" in
    d) duration=$OPTARG ;;
    k) kill_after=$OPTARG ;;
    t) threads=$OPTARG ;;
    *) sed -n '2,12p' "$0" >&2; exit 2 ;;
  esac
done
port=${BENCH_PORT:-18091}
CREMA=$(crema_bin)
stamp=$(date -u +%Y%m%dT%H%M%SZ)
out=bench/results/kill-drill-$stamp
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

log "load: $threads client threads for ${duration}s (drills/drill_client.py)"
timeout $((duration + 60)) python3 drills/drill_client.py load --port "$port" --pos-key "$BENCH_POS_KEY" \
  --barista-key "$BENCH_BARISTA_KEY" --journal "$out/journal.jsonl" --outcomes "$out/outcomes.jsonl" \
  --threads "$threads" --duration "$duration" --run-id "drill-$stamp" > "$out/client.txt" 2>&1 &
CLIENT_PID=$!

sleep "$kill_after"
kill_time=$(now)
kill -KILL "$SERVE_PID"
wait "$SERVE_PID" 2>/dev/null || true
acked_before=$(wc -l < "$out/journal.jsonl")
log "kill -9 crema serve (pid $SERVE_PID) after ${kill_after}s; $acked_before requests acknowledged so far"
echo "--- kill -9 at $kill_time ---" >> "$out/serve.log"
start_serve "$conninfo" "$port" 8 "$out/serve.log"
wait_ready "$port" 30
ready_time=$(now)
log "restarted (pid $SERVE_PID): /health/ready 200 $(python3 -c "print(f'{$ready_time - $kill_time:.2f}')") s after the kill"

wait "$CLIENT_PID" || { echo "drill client failed" >&2; cat "$out/client.txt" >&2; CLIENT_PID=""; exit 1; }
CLIENT_PID=""
log "client: $(cat "$out/client.txt")"

violations=0
acked_after=$(python3 -c "
import json, sys
print(sum(1 for l in open('$out/journal.jsonl') if json.loads(l)['t'] > $ready_time))")
log "acknowledged before the kill: $acked_before, after the restart: $acked_after"
[ "$acked_before" -gt 0 ] && [ "$acked_after" -gt 0 ] || { echo "VIOLATION: the load did not span the kill" >&2; violations=$((violations + 1)); }

log "(a) every acknowledged event is in order_events"
if verify_journal "$conninfo" "$out/journal.jsonl" "$out" | tee -a "$out/run.log"; then :; else
  echo "VIOLATION: acknowledged events missing" >&2; violations=$((violations + 1)); fi

log "(b) scripts/check-consistency"
scripts/check-consistency "$conninfo" > "$out/consistency.txt" 2>&1 || violations=$((violations + 1))
tail -1 "$out/consistency.txt" | tee -a "$out/run.log"

log "(c) /health/ready and replays of requests acknowledged before the kill"
code=$(curl -s -o /dev/null -m 5 -w '%{http_code}' "http://127.0.0.1:$port/health/ready")
echo "/health/ready -> $code" | tee -a "$out/run.log"
[ "$code" = 200 ] || violations=$((violations + 1))
if python3 drills/drill_client.py replay --port "$port" --pos-key "$BENCH_POS_KEY" --barista-key "$BENCH_BARISTA_KEY" \
  --journal "$out/journal.jsonl" --before "$kill_time" --count 5 | tee -a "$out/run.log"; then :; else
  violations=$((violations + 1)); fi

# Retried requests whose first try got no answer but whose transaction had committed come back as replays.
python3 - "$out" "$kill_time" "$ready_time" <<'EOF' | tee -a "$out/run.log"
import json, sys
out, kill, ready = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
o = [json.loads(l) for l in open(f"{out}/outcomes.jsonl")]
during = [x for x in o if kill <= x["t"] < ready]
by = {}
for x in during: by[x["error"] or x["status"]] = by.get(x["error"] or x["status"], 0) + 1
print(f"requests started between the kill and /health/ready 200: {len(during)} {by}")
statuses = {}
for x in o: statuses[x["status"]] = statuses.get(x["status"], 0) + 1
print(f"all answers by status (0 = no answer): {statuses}")
EOF
if grep -q '"status": 5' "$out/outcomes.jsonl"; then
  echo "note: some answers were 5xx (see outcomes.jsonl)" | tee -a "$out/run.log"
fi
log "violations: $violations"
exit $((violations > 0))
