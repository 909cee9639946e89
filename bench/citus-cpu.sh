#!/usr/bin/env bash
# PostgreSQL CPU per order event on the Citus cluster of scripts/citus-test (a coordinator and two workers) beside a
# plain private cluster, same machine, same crema binary, same load (issue #44, docs/scaling.md "On a running cluster").
# For each side: a fresh database, crema migrate (which distributes it on the coordinator), crema serve, a warm-up,
# then LIFECYCLES complete lifecycles (placed, started, ready, picked_up: 4 events each) from CONCURRENCY clients, and the
# CPU (user + system) that every PostgreSQL process of the side's clusters used meanwhile: the postmasters' own and
# reaped children's times plus the live backends', from /proc. Events are the rows the window added to order_events.
# A measurement, not a test: it fails only when a request fails. Run scripts/citus-test first (it makes the clusters).
# Usage: bench/citus-cpu.sh [LIFECYCLES] [CONCURRENCY]   (defaults 200, 4)
set -euo pipefail
cd "$(dirname "$0")/.."
lifecycles=${1:-200} concurrency=${2:-4}
bin=$(swift build --show-bin-path)
root=$PWD/.crema/citus
[ -d "$root/coordinator/data" ] || { echo "no cluster under $root: run scripts/citus-test first" >&2; exit 2; }
admin() { echo "host='$root/$1' port=5432 user=crema dbname=${2:-postgres}"; }
for node in coordinator worker1 worker2 plain; do
  "$bin/crema" postgres start --dir "$root/$node" --database crema_test --max-connections 1000 > /dev/null
done
trap 'kill ${serve_pid:-} 2> /dev/null || true; for n in coordinator worker1 worker2 plain; do "$bin/crema" postgres stop --dir "$root/$n" > /dev/null 2>&1 || true; done' EXIT

# CPU seconds of every process of the clusters named: each postmaster's own and reaped children's, and its live children's.
pg_cpu() {
  python3 - "$@" <<'PY'
import os, sys
tick = os.sysconf("SC_CLK_TCK"); total = 0
for folder in sys.argv[1:]:
    master = int(open(os.path.join(folder, "data", "postmaster.pid")).readline())
    for pid in os.listdir("/proc"):
        if not pid.isdigit(): continue
        try: fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        except OSError: continue
        ppid, utime, stime, cutime, cstime = int(fields[1]), *map(int, fields[11:15])
        if int(pid) == master: total += utime + stime + cutime + cstime
        elif ppid == master: total += utime + stime
print(f"{total / tick:.2f}")
PY
}
delta() { python3 -c "print(f'{$2 - $1:.2f}')"; }

run_side() { # NAME CONNINFO CLUSTER-FOLDERS...
  local name=$1 conninfo=$2; shift 2
  export CREMA_DATABASE_URL=$conninfo CREMA_DATA_DIR=$root/bench-$name
  export CREMA_API_KEYS="pos:pos-key-for-citus-bench-01,barista:barista-key-for-citus-bench"
  rm -rf "$CREMA_DATA_DIR"; mkdir -p "$CREMA_DATA_DIR"
  "$bin/crema" migrate > "$root/bench-$name-migrate.txt"
  LOG_LEVEL=warning "$bin/crema" serve --port 18099 > "$root/bench-$name-serve.log" 2>&1 &
  serve_pid=$!
  for _ in $(seq 100); do curl -sf http://127.0.0.1:18099/health/ready > /dev/null 2>&1 && break; sleep 0.2; done
  python3 bench/citus_lifecycles.py http://127.0.0.1:18099 20 "$concurrency" warm > /dev/null
  local first=$1 events0 events1 first0 first1 all0 all1 start end
  events0=$(psql "$conninfo" -XAtc "SELECT count(*) FROM order_events"); first0=$(pg_cpu "$first"); all0=$(pg_cpu "$@")
  start=$(date +%s.%N)
  python3 bench/citus_lifecycles.py http://127.0.0.1:18099 "$lifecycles" "$concurrency" run
  end=$(date +%s.%N); first1=$(pg_cpu "$first"); all1=$(pg_cpu "$@")
  events1=$(psql "$conninfo" -XAtc "SELECT count(*) FROM order_events")
  kill "$serve_pid"; wait "$serve_pid" 2> /dev/null || true; serve_pid=
  python3 -c "
events = $events1 - $events0; wall = $end - $start; first = $first1 - $first0; total = $all1 - $all0
print(f'$name: {events} events in {wall:.1f} s ({events / wall:.0f}/s); PostgreSQL CPU {total:.2f} s = {total * 1000 / events:.3f} ms per event'
      + (f' (coordinator {first * 1000 / events:.3f}, workers {(total - first) * 1000 / events:.3f})' if $# > 1 else ''))"
}

for node in coordinator worker1 worker2; do
  psql "$(admin "$node")" -XAq -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS crema_bench WITH (FORCE)" -c "CREATE DATABASE crema_bench"
  psql "$(admin "$node" crema_bench)" -XAq -c "CREATE EXTENSION citus"
done
psql "$(admin coordinator crema_bench)" -XAq -c "SELECT citus_set_coordinator_host('$root/coordinator', 5432)" \
  -c "SELECT citus_add_node('$root/worker1', 5432)" -c "SELECT citus_add_node('$root/worker2', 5432)" > /dev/null
# The same test-grade durability as the Citus nodes (scripts/citus-test sets it there).
psql "$(admin plain)" -XAq -c "ALTER SYSTEM SET fsync = off" -c "ALTER SYSTEM SET synchronous_commit = off" \
  -c "ALTER SYSTEM SET full_page_writes = off" -c "SELECT pg_reload_conf()" -c "SET client_min_messages = warning" \
  -c "DROP DATABASE IF EXISTS crema_bench WITH (FORCE)" -c "CREATE DATABASE crema_bench" > /dev/null
run_side plain "$(admin plain crema_bench)" "$root/plain"
run_side citus "$(admin coordinator crema_bench)" "$root/coordinator" "$root/worker1" "$root/worker2"
