#!/usr/bin/env bash
# Driver benchmark (issue #13): one event-shaped transaction -- BEGIN, lock an order, claim a key, write the order
# and its event, COMMIT -- through Crema's driver (pipelined as Crema's commands are, and one statement at a time),
# through postgres-nio (vapor/postgres-nio's PostgresClient, in a bench-only package: bench/driver), and through
# pgbench (plain and \startpipeline-grouped, both -M prepared), at each concurrency, on one fresh private cluster.
# Prints events/s, p50/p99 per event and the client's CPU per event; PostgreSQL's CPU per event for every run.
# A benchmark measures; it fails only when a run is invalid (an error, or a row count that does not add up).
#
# Usage: bench/driver.sh [-c "1 4 16"] [-d SECONDS] [-q WAIT]
#   defaults: -c "1 4 16" -d 10 -q 60 (wait up to 60 s for a quiet machine before each run).
# Environment: CREMA_BIN (for `crema postgres start`; default .build-release/release/crema),
#   PGBENCH (default /usr/lib/postgresql/15/bin/pgbench).
# Builds bench/driver in release mode (scratch path .build-release-driver). Raw outputs: bench/results/driver-<time>/.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh

levels="1 4 16" duration=10 quiet=60
while getopts "c:d:q:" opt; do
  case "$opt" in
    c) levels=$OPTARG ;;
    d) duration=$OPTARG ;;
    q) quiet=$OPTARG ;;
    *) sed -n '2,14p' "$0" >&2; exit 2 ;;
  esac
done
pgbench=${PGBENCH:-/usr/lib/postgresql/15/bin/pgbench}
CREMA=$(crema_bin)

stamp=$(date -u +%Y%m%dT%H%M%SZ)
out=bench/results/driver-$stamp
mkdir -p "$out"
cluster=$(mktemp -d /tmp/crema-driver.XXXXXX)
cleanup() { "$CREMA" postgres stop --dir "$cluster" > /dev/null 2>&1 || true; rm -rf "$cluster"; }
trap cleanup EXIT

echo "== building bench/driver (release)"
(cd bench/driver && swift build -c release --scratch-path ../../.build-release-driver 2>&1 | tail -3)
driver=.build-release-driver/release/DriverBench
machine_info | tee "$out/machine.txt"

conninfo=$(start_cluster "$cluster" driver_bench "$out/postgres-start.log")
setup() {
  psql "$conninfo" -XAq -v ON_ERROR_STOP=1 <<'SQL'
DROP TABLE IF EXISTS bench_orders, bench_keys, bench_events;
CREATE TABLE bench_orders (id int PRIMARY KEY, version int NOT NULL, payload text NOT NULL);
CREATE TABLE bench_keys (key text PRIMARY KEY, created_at timestamptz NOT NULL DEFAULT now());
CREATE TABLE bench_events (id int NOT NULL, version int NOT NULL, data text NOT NULL, PRIMARY KEY (id, version));
INSERT INTO bench_orders SELECT g, 0, '' FROM generate_series(1, 20000) g;
VACUUM ANALYZE;
CHECKPOINT;
SQL
}
# Every event leaves one event row and one key: a run whose counts disagree is invalid.
check() {
  local events keys versions
  read -r events keys versions < <(psql "$conninfo" -XAt -F' ' -c \
    "SELECT (SELECT count(*) FROM bench_events), (SELECT count(*) FROM bench_keys), (SELECT sum(version) FROM bench_orders)")
  [ "$events" = "$keys" ] && [ "$events" = "$versions" ] || { echo "INVALID run: events=$events keys=$keys versions=$versions" >&2; exit 1; }
  echo "$events"
}

summary=$out/summary.txt
: > "$summary"
for c in $levels; do
  for side in crema-pipelined crema-sequential nio pgbench pgbench-pipelined; do
    setup
    echo "machine busy before: $(wait_quiet "$quiet")%" >> "$out/$side-c$c.txt"
    pg0=$(cluster_ticks "$cluster")
    case "$side" in
      pgbench|pgbench-pipelined)
        script=bench/driver.pgbench.sql
        [ "$side" = pgbench-pipelined ] && script=bench/driver-pipelined.pgbench.sql
        /usr/bin/time -f "%U %S" -o "$out/$side-c$c.time" \
          "$pgbench" -n -M prepared -c "$c" -j $(( c < 2 ? c : 2 )) -T "$duration" -f "$script" "$conninfo" >> "$out/$side-c$c.txt" 2>&1
        rate=$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' "$out/$side-c$c.txt" | head -1)
        latency=$(sed -n 's/^latency average = \([0-9.]*\) ms/\1/p' "$out/$side-c$c.txt")
        line="mode=$side c=$c events_per_s=${rate%.*} latency_avg_ms=$latency"
        ;;
      *)
        /usr/bin/time -f "%U %S" -o "$out/$side-c$c.time" "$driver" "$side" "$conninfo" "$c" "$duration" >> "$out/$side-c$c.txt" 2>&1
        line=$(grep '^mode=' "$out/$side-c$c.txt")
        ;;
    esac
    sleep 1
    pg1=$(cluster_ticks "$cluster")
    events=$(check)
    echo "$line postgres_cpu_ms_per_event=$(awk -v t=$((pg1 - pg0)) -v n="$events" 'BEGIN { printf "%.3f", t * 10 / n }')" | tee -a "$summary"
  done
done
echo "== results in $out/summary.txt"
