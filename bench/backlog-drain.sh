#!/usr/bin/env bash
# Backlog drain (issue #14): how long `crema dispatch` takes to empty a deep outbox, how long the oldest push
# waited, and whether its memory stays bounded whatever the backlog.
#
# One private PostgreSQL cluster and one `crema apns-sim` (HTTP/2 + TLS). For each backlog size N (default
# 10000 and 100000): a fresh database, bench/outbox-fixture.sql (N pending alert pushes, each to its own token),
# VACUUM ANALYZE, CHECKPOINT; then `crema dispatch` (defaults: --batch-size 64 --workers 2) until nothing is
# pending or in flight. Reported per N:
#   - time to empty: from the dispatcher's "running" line (start-up done) to the last row's sent_at;
#   - waits, counted from the dispatcher's start (every row was created before it): the oldest push's (the first
#     created, the first due) and the longest of any push's (the last one sent; equals the time to empty);
#   - memory: crema's peak RSS (VmHWM from /proc at the end) and its RSS sampled every 0.5 s (rss.tsv);
#   - the simulator must have accepted exactly N requests to N distinct tokens, and every row must be `sent`.
# Bounded memory means the peak RSS at 100000 is within 10 % + 16 MB of the peak at the smallest N.
#
# Usage: bench/backlog-drain.sh [-b BATCH] [-w WORKERS] [N ...]
# Environment: CREMA_BIN (default .build-release/release/crema), BENCH_SIM_PORT (default 18444).
# Raw outputs: bench/results/backlog-drain-<time>/ (git-ignored). Exits 1 when a run is invalid or memory grew.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh

batch=64 workers=2
while getopts "b:w:" opt; do
  case "$opt" in
    b) batch=$OPTARG ;;
    w) workers=$OPTARG ;;
    *) sed -n '2,18p' "$0" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(10000 100000)
port=${BENCH_SIM_PORT:-18444}
CREMA=$(crema_bin)

bench_workspace backlog-drain

{
  machine_info
  echo "backlogs: ${sizes[*]}; crema dispatch --batch-size $batch --workers $workers"
} | tee "$out/machine.txt"

log "fresh PostgreSQL cluster in $cluster; crema apns-sim on 127.0.0.1:$port"
conninfo=$(start_cluster "$cluster" crema_bench "$out/postgres-start.log")
# The simulator keeps every record of the largest backlog (it trims beyond its limit).
start_apns_sim "$port" "$out/sim" "$out/sim.log"

for n in "${sizes[@]}"; do
  log "backlog $n: fresh database"
  DB=$(new_database "$conninfo" "crema_backlog_$n")
  CREMA_DATABASE_URL="$DB" LOG_LEVEL=warning "$CREMA" migrate >> "$out/migrate.log" 2>&1
  psql "$DB" -XAq -v ON_ERROR_STOP=1 -v n="$n" -v topic="$BENCH_BUNDLE_ID" -f bench/outbox-fixture.sql > /dev/null
  psql "$DB" -XAq -v ON_ERROR_STOP=1 -c "VACUUM ANALYZE" -c CHECKPOINT > /dev/null
  [ "$(outbox_open "$DB")" = "$n" ] || { echo "the fixture did not load $n pending rows" >&2; exit 1; }
  sim_curl DELETE /sim/requests > /dev/null

  log "backlog $n: crema dispatch"
  t0=$(date +%s.%N)
  CREMA_DATABASE_URL="$DB" LOG_LEVEL=warning "$CREMA" dispatch --batch-size "$batch" --workers "$workers" \
    > >(while IFS= read -r line; do printf '%s %s\n' "$(date +%s.%N)" "$line"; done > "$out/n$n-crema.log") 2>&1 &
  DISPATCH_PID=$!
  : > "$out/n$n-rss.tsv"
  while [ "$(outbox_open "$DB")" != 0 ]; do
    kill -0 "$DISPATCH_PID" 2> /dev/null || { echo "crema dispatch exited; see $out/n$n-crema.log" >&2; exit 1; }
    printf '%s\t%s\n' "$(date +%s.%N)" "$(awk '/^VmRSS/ { print $2 }' "/proc/$DISPATCH_PID/status")" >> "$out/n$n-rss.tsv"
    sleep 0.5
  done
  hwm=$(awk '/^VmHWM/ { print $2 }' "/proc/$DISPATCH_PID/status")
  stop_pid "$DISPATCH_PID"; DISPATCH_PID=""
  sim_curl GET /sim/requests > "$out/n$n-sim.json"
  python3 bench/delivery_report.py sim-summary "$out/n$n-sim.json" > "$out/n$n-sim-summary.json"
  psql "$DB" -XAt -F ' ' -c "SELECT count(*) FILTER (WHERE state = 'sent'), count(*), extract(epoch FROM max(sent_at)),
      (SELECT extract(epoch FROM sent_at) FROM delivery_outbox ORDER BY created_at, delivery_id LIMIT 1), max(attempts)
      FROM delivery_outbox" > "$out/n$n-db.txt"
  running=$(awk '/dispatcher running/ { print $1; exit }' "$out/n$n-crema.log")
  echo "n=$n t0=$t0 running=${running:-0} hwm_kb=$hwm" > "$out/n$n-run.txt"
  psql "$conninfo" -XAq -c "DROP DATABASE crema_backlog_$n" > /dev/null || true
done

python3 - "$out" "${sizes[@]}" <<'EOF' | tee "$out/summary.txt"
import json, sys
out, sizes = sys.argv[1], [int(x) for x in sys.argv[2:]]
valid, rows = True, []
for n in sizes:
    run = dict(kv.split("=") for kv in open(f"{out}/n{n}-run.txt").read().split())
    sent, total, last_sent, oldest_sent, max_attempts = open(f"{out}/n{n}-db.txt").read().split()
    sim = json.load(open(f"{out}/n{n}-sim-summary.json"))
    rss = [int(line.split()[1]) for line in open(f"{out}/n{n}-rss.tsv") if len(line.split()) == 2]
    problems = []
    if int(sent) != n or int(total) != n: problems.append(f"{sent} of {total} rows sent")
    if sim["accepted"] != n or sim["distinct_tokens"] != n: problems.append(f"simulator accepted {sim['accepted']}, tokens {sim['distinct_tokens']}")
    running = float(run["running"])
    if not running: problems.append("no 'dispatcher running' line")
    drain = float(last_sent) - running if running else float("nan")
    rows.append(dict(n=n, drain=drain, rate=n / drain if drain == drain and drain > 0 else float("nan"),
                     oldest=float(oldest_sent) - running if running else float("nan"), hwm=int(run["hwm_kb"]) / 1024, rss_max=max(rss, default=0) / 1024,
                     samples=len(rss), attempts=max_attempts, problems=problems))
    valid &= not problems
print("waits from the dispatcher's start: the oldest push's, and the longest (= the time to empty)")
print(f"{'backlog':>8} {'to empty':>9} {'pushes/s':>9} {'oldest push':>12} {'peak RSS':>9} {'max sampled RSS':>16} {'max attempts':>13}")
for r in rows:
    print(f"{r['n']:>8} {r['drain']:8.2f}s {r['rate']:9.0f} {r['oldest']:11.3f}s {r['hwm']:7.1f}MB {r['rss_max']:14.1f}MB {r['attempts']:>13}"
          + ("  INVALID: " + "; ".join(r["problems"]) if r["problems"] else ""))
small, large = rows[0], rows[-1]
bounded = large["hwm"] <= small["hwm"] * 1.10 + 16
print(f"memory: peak {small['hwm']:.1f} MB at {small['n']} pushes, {large['hwm']:.1f} MB at {large['n']}:"
      f" {'bounded' if bounded else 'GREW'} (limit: 10 % + 16 MB)")
print("run " + ("valid" if valid else "INVALID"))
sys.exit(0 if valid and bounded else 1)
EOF
