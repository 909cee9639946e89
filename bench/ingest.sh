#!/usr/bin/env bash
# Ingest benchmark (docs/design.md §8): complete order lifecycles through Crema's HTTP API (wrk + bench/lifecycle.lua)
# against pgbench running the same SQL transactions at the same concurrency on the same database, twice: plain
# (bench/ingest.pgbench.sql: every statement its own round trip) and pipelined (bench/ingest-pipelined.pgbench.sql:
# the same statements in pgbench pipelines, grouped into round trips as Crema groups them), both -M prepared.
# Prints events/s, p50/p99 per event, PostgreSQL CPU per event, and the ratios HTTP/plain and HTTP/pipelined
# (target >= 70 %). The pgbench files mirror today's event transaction without pg_notify (it is moving out of the
# commit): a crema binary that still notifies inside its transaction pays for that on the HTTP side only.
# A benchmark measures; it is not a test: it fails only when a run is invalid (a non-2xx answer, a pgbench
# error, or a consistency violation), never because of the ratio.
# Steps: fresh private cluster (crema postgres start) with database crema_bench, crema migrate, crema serve
# (pool = concurrency), stores s1..s8, one lifecycle through the API to capture the real stored texts that
# pgbench then writes, with PostgreSQL's statement log on: bench/ingest_statements.py compares the statements of
# crema's four event transactions with each pgbench file's, and the run stops there when they differ (the two sides
# would not run the same SQL). Then each side (HTTP, pgbench plain, pgbench pipelined): 5 s warm-up, CHECKPOINT,
# measured run. crema serve is stopped while pgbench runs, so each side has the machine to itself. Finally
# scripts/check-consistency and a summary.
#
# Last, crema's instructions per event (-i): a count, not a time, so it repeats on a busy machine (see phase_count).
#
# What PostgreSQL writes per event, for each side's measured window (issue #45; bench/pg_writes.py says how each is
# taken): WAL bytes (the LSN distance, and pg_stat_statements' wal_bytes and full-page images summed over the
# statements), index entries per table and per index (btree leaf insertions counted in the window's WAL by pg_waldump,
# beside the counters' inserts + non-HOT updates), the HOT share of updates (pg_stat_user_tables), and blocks dirtied
# and written (pg_stat_statements); events are the rows the window added to order_events. Then every index of the
# tables written, with its idx_scan over the whole run (0: unused). The cluster runs with pg_stat_statements loaded.
#
# Usage: bench/ingest.sh [-c CONCURRENCY] [-d SECONDS] [-w WARMUP_SECONDS] [-o http-first|pgbench-first] [-q WAIT] [-a] [-s]
#                        [-i LIFECYCLES] [-I] [-C]
#   defaults: -c 16 -d 20 -w 5 -o http-first -q 0 -i 150; wrk and pgbench both use 2 threads (-t 2 / -j 2).
#   -o pgbench-first runs both pgbench sides (plain, then pipelined) before HTTP; http-first runs them after.
#   -q WAIT: first wait up to WAIT seconds for the machine to be idle (other work skews the result; a run
#   during which something else used > 15 % of a core is reported as NOISY).
#   -a: ANALYZE after each warm-up. Connections keep the generic plans they made in the first seconds, on nearly
#   empty tables, until an ANALYZE invalidates them (autovacuum's first one comes after a minute or more); with -a
#   the measured run plans on statistics of the data it runs against, as a long-running deployment would.
#   -s: only check the pgbench files against crema's statements (the set-up and the sample lifecycle; no wrk needed).
#   -i LIFECYCLES: the instruction count's load, in complete lifecycles (4 events each; 0: no count). crema serve runs
#   under valgrind --tool=callgrind (about 50x slower, so a fixed number of lifecycles on 2 connections rather than
#   C for D seconds; 150 take 15-60 s) and counts only between `callgrind_control -i on` and a dump after the
#   last answer: start-up, migration and a 20-lifecycle warm-up are not counted. Prints "crema instructions per
#   event" (Ir over the order_events rows the window added), the same without the timers' and polls' share (the
#   number to compare between runs), and where they go (bench/ingest_profile.py). About 1.5 minutes in all.
#   -I: only the instruction count (the set-up, the statement check, then -i; no wrk or pgbench runs).
#   -C: on the Citus cluster of scripts/citus-test (.crema/citus: a coordinator and two workers; run that first)
#   instead of a fresh private cluster: crema_bench is made on the three nodes, the workers added, and crema migrate
#   distributes it; crema serve connects to the coordinator. Only the HTTP side runs (the pgbench files compute in SQL
#   values crema binds, which Citus refuses in places) and the statement check is left to -s on plain PostgreSQL.
#   PostgreSQL CPU is every node's, and the coordinator's apart; what PostgreSQL writes (one node's WAL) is not measured.
# Environment: CREMA_BIN (default .build-release/release/crema), BENCH_PORT (default 18090),
#   PGBENCH (default /usr/lib/postgresql/15/bin/pgbench), BENCH_DIR (cluster folder; default a fresh temp dir),
#   BENCH_COUNT_CONNECTIONS (the count's connections, default 2), BENCH_VALGRIND_OPTIONS (more callgrind options).
# Needs: wrk (installed with apt-get when missing), postgresql-15 (pgbench, psql, pg_waldump), curl, python3; for -i
#   valgrind, binutils (strip) and a C compiler (cc): without valgrind the count is skipped with a note.
# crema's context switches over the HTTP phase come twice: perf stat's total (the #13 target), and from /proc per
# thread, split into voluntary (a thread waiting: crema's own hops) and preempted (more runnable threads than cores).
# Raw outputs go to bench/results/ingest-<time>-c<C>/ (git-ignored).
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh

concurrency=16 duration=20 warmup=5 order=http-first quiet_wait=0 analyze=no statements_only=no
count_lifecycles=150 count_only=no citus=no
while getopts "c:d:w:o:q:asi:IC" opt; do
  case "$opt" in
    c) concurrency=$OPTARG ;;
    d) duration=$OPTARG ;;
    w) warmup=$OPTARG ;;
    o) order=$OPTARG ;;
    q) quiet_wait=$OPTARG ;;
    a) analyze=yes ;;
    s) statements_only=yes ;;
    i) count_lifecycles=$OPTARG ;;
    I) count_only=yes ;;
    C) citus=yes ;;
    *) sed -n '2,54p' "$0" >&2; exit 2 ;;
  esac
done
case "$order" in http-first|pgbench-first) ;; *) echo "-o must be http-first or pgbench-first" >&2; exit 2 ;; esac
threads=2
[ "$concurrency" -lt "$threads" ] && threads=$concurrency
port=${BENCH_PORT:-18090}
pgbench=${PGBENCH:-/usr/lib/postgresql/15/bin/pgbench}
CREMA=$(crema_bin)
[ "$count_only" = yes ] && [ "$count_lifecycles" -eq 0 ] && { echo "-I needs -i LIFECYCLES > 0" >&2; exit 2; }
[ "$statements_only" = yes ] || [ "$count_only" = yes ] || bench_require wrk:wrk || { echo "refusing to run without wrk" >&2; exit 1; }
[ -x "$pgbench" ] || { echo "pgbench is missing at $pgbench" >&2; exit 1; }

stamp=$(date -u +%Y%m%dT%H%M%SZ)
suffix="" && [ "$citus" = yes ] && suffix=-citus
out=bench/results/ingest-$stamp-c$concurrency$suffix
mkdir -p "$out"
out=$(cd "$out" && pwd)
citus_root=$PWD/.crema/citus citus_nodes=(coordinator worker1 worker2)
if [ "$citus" = yes ]; then
  [ -d "$citus_root/coordinator/data" ] || { echo "no Citus cluster under $citus_root: run scripts/citus-test first" >&2; exit 2; }
  cluster=$citus_root/coordinator
else
  cluster=${BENCH_DIR:-$(mktemp -d /tmp/crema-bench.XXXXXX)}
fi
SERVE_PID="" count_scratch=""

cleanup() {
  [ -n "$SERVE_PID" ] && stop_pid "$SERVE_PID" 60
  [ -n "$count_scratch" ] && rm -rf "$count_scratch"
  if [ "$citus" = yes ]; then
    for node in "${citus_nodes[@]}"; do "$CREMA" postgres stop --dir "$citus_root/$node" > /dev/null 2>&1 || true; done
    return
  fi
  "$CREMA" postgres stop --dir "$cluster" > /dev/null 2>&1 || true
  [ -z "${BENCH_DIR:-}" ] && rm -rf "$cluster"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log() { echo "== $*" | tee -a "$out/run.log"; }

# ---- machine and versions ----
{
  echo "date: $stamp"
  echo "repository HEAD: $(git rev-parse HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD -- Sources Package.swift 2>/dev/null || echo ' (+ uncommitted changes)')"
  echo "crema: $CREMA (sha256 $(sha256sum "$CREMA" | cut -c1-16), built $(date -u -r "$CREMA" +%Y-%m-%dT%H:%M:%SZ))"
  echo "nproc: $(nproc)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
  echo "memory: $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo)"
  echo "swift: $(swift --version 2>&1 | head -1 || true)"
  echo "postgres: $("$(dirname "$pgbench")/postgres" --version)"
  echo "wrk: $(wrk -v 2>&1 | head -1 || true)"
  echo "concurrency: $concurrency, duration: ${duration}s, warm-up: ${warmup}s, threads: $threads, order: $order, analyze after warm-up: $analyze"
  echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$out/machine.txt"

# ---- database ----
# -C: crema_bench made again on each node of the Citus cluster, with the extension and the workers (as
# bench/citus-cpu.sh does); crema migrate distributes it below. postmasters: every node's, the coordinator's first.
citus_database() {
  local node admin
  for node in "${citus_nodes[@]}"; do
    "$CREMA" postgres start --dir "$citus_root/$node" --database crema_test --max-connections 1000 >> "$out/postgres-start.log" 2>&1
    admin="host='$citus_root/$node' port=5432 user=crema dbname=postgres"
    psql "$admin" -XAq -v ON_ERROR_STOP=1 -c "SET client_min_messages = warning" \
      -c "DROP DATABASE IF EXISTS crema_bench WITH (FORCE)" -c "CREATE DATABASE crema_bench"
    psql "host='$citus_root/$node' port=5432 user=crema dbname=crema_bench" -XAq -v ON_ERROR_STOP=1 -c "CREATE EXTENSION citus"
    postmasters+=("$(head -1 "$citus_root/$node/data/postmaster.pid")")
  done
  conninfo="host='$citus_root/coordinator' port=5432 user=crema dbname=crema_bench"
  psql "$conninfo" -XAq -v ON_ERROR_STOP=1 -c "SELECT citus_set_coordinator_host('$citus_root/coordinator', 5432)" \
    -c "SELECT citus_add_node('$citus_root/worker1', 5432)" -c "SELECT citus_add_node('$citus_root/worker2', 5432)" > /dev/null
}
postmasters=()
if [ "$citus" = yes ]; then
  log "crema_bench on the Citus cluster in $citus_root (coordinator, worker1, worker2)"
  citus_database
  echo "$conninfo" > "$out/conninfo"
  postmaster=${postmasters[0]}
  # One node's WAL and pg_stat_statements say nothing of the cluster: not measured with -C.
  pg_writes_begin() { :; }
  pg_writes_end() { :; }
else
  log "starting a fresh PostgreSQL cluster in $cluster"
  conninfo=$("$CREMA" postgres start --dir "$cluster" --database crema_bench 2> "$out/postgres-start.log" | tail -1)
  # pg_stat_statements, for what PostgreSQL writes per event (issue #45: WAL bytes, blocks dirtied and written by the
  # statements); it loads at server start only, hence a restart with it preloaded. Planning is not tracked (the module's
  # default, and its cheapest): its bookkeeping still costs PostgreSQL a little CPU per statement, in every side alike.
  printf '%s\n' "shared_preload_libraries = 'pg_stat_statements'" >> "$cluster/data/postgresql.conf"
  "$CREMA" postgres stop --dir "$cluster" > /dev/null
  conninfo=$("$CREMA" postgres start --dir "$cluster" --database crema_bench 2>> "$out/postgres-start.log" | tail -1)
  echo "$conninfo" > "$out/conninfo"
  postmaster=$(head -1 "$cluster/data/postmaster.pid")
  postmasters=("$postmaster")
fi
CREMA_DATABASE_URL="$conninfo" LOG_LEVEL=warning "$CREMA" migrate > "$out/migrate.log" 2>&1
[ "$citus" = yes ] || psql "$conninfo" -XAq -v ON_ERROR_STOP=1 -c "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"
psql "$conninfo" -XAt -c "SELECT name || '=' || setting FROM pg_settings WHERE name IN
  ('fsync','synchronous_commit','shared_buffers','max_connections','wal_level','max_wal_size','checkpoint_timeout')
  ORDER BY name" > "$out/postgres-settings.txt"

serve() {
  start_serve "$conninfo" "$port" "$concurrency" "$out/serve.log"
  wait_ready "$port" 30
}
stop_serve() { stop_pid "$SERVE_PID"; SERVE_PID=""; }

# ---- CPU accounting: ticks (1/100 s) from /proc ----
ticks_of() { awk '{ print $14 + $15 + $16 + $17 }' "/proc/$1/stat" 2>/dev/null || echo 0; }
postgres_ticks() {
  # Each postmaster's own time plus its waited-for children (exited backends), plus every live child; the
  # postmasters named (default: every node's). Callers let exiting backends be reaped first (see settle), else one
  # could be missed or counted twice.
  local total=0 pid master
  for master in "${@:-${postmasters[@]}}"; do
    total=$((total + $(ticks_of "$master")))
    for pid in $(ps --ppid "$master" -o pid= 2>/dev/null); do total=$((total + $(ticks_of "$pid"))); done
  done
  echo "$total"
}
# Waits (bounded) until no client backend is left (their process titles say "[local]"), so that every
# exited backend has been reaped into the postmaster's children time.
settle() {
  local deadline=$((SECONDS + 10)) master
  for master in "${postmasters[@]}"; do
    while ps --ppid "$master" -o args= | grep -q '\[local\]' && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.1; done
  done
}
# Machine-wide ticks over all cores: "busy total" (busy = user + nice + system + irq + softirq + steal).
machine_ticks() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 }' /proc/stat; }
cpu_begin() {
  [ -n "$SERVE_PID" ] || settle
  read -r m_busy0 m_total0 < <(machine_ticks); pg0=$(postgres_ticks); pgc0=$(postgres_ticks "$postmaster"); cr0=$([ -n "$SERVE_PID" ] && ticks_of "$SERVE_PID" || echo 0)
  read -r cru0 crs0 < <(user_system_of "${SERVE_PID:-0}")
}
# user_system_of PID: its user and system ticks, apart (instructions per event count user space only).
user_system_of() { awk '{ print $14, $15 }' "/proc/$1/stat" 2>/dev/null || echo 0 0; }
# cpu_end NAME CLIENT_TIME_FILE: writes NAME-cpu.txt: ticks (1/100 s) of the machine (busy, total over all cores),
# postgres, crema and the load generator (from /usr/bin/time) over the phase; "other" = busy minus those.
cpu_end() {
  local m_busy1 m_total1 pg1 cr1 client
  [ -n "$SERVE_PID" ] || settle  # pgbench's backends exit with it; let them be reaped
  read -r m_busy1 m_total1 < <(machine_ticks)
  pg1=$(postgres_ticks); pgc1=$(postgres_ticks "$postmaster"); cr1=$([ -n "$SERVE_PID" ] && ticks_of "$SERVE_PID" || echo 0)
  local cru1 crs1
  read -r cru1 crs1 < <(user_system_of "${SERVE_PID:-0}")
  client=$(awk '{ printf "%d", ($1 + $2) * 100 }' "$2")
  echo "busy=$((m_busy1 - m_busy0)) total=$((m_total1 - m_total0)) postgres=$((pg1 - pg0)) crema=$((cr1 - cr0)) client=$client cores=$(nproc)" \
    "crema_user=$((cru1 - cru0)) crema_system=$((crs1 - crs0)) postgres_coordinator=$((pgc1 - pgc0)) nodes=${#postmasters[@]}" > "$out/$1-cpu.txt"
}

# thread_switches PID: one line per thread of PID, "tid|comm|voluntary|nonvoluntary" context switches so far. perf
# stat counts both kinds together; a voluntary switch is a thread waiting (crema's own hops), a nonvoluntary one a
# thread preempted by another runnable thread. A thread that ends during the phase takes its counts with it.
thread_switches() {
  local task
  for task in /proc/"$1"/task/*; do
    printf '%s|%s|%s|%s\n' "${task##*/}" "$(cat "$task/comm" 2> /dev/null)" \
      "$(awk '/^voluntary_ctxt_switches/ { print $2 }' "$task/status" 2> /dev/null)" \
      "$(awk '/^nonvoluntary_ctxt_switches/ { print $2 }' "$task/status" 2> /dev/null)"
  done
}

# A top snapshot in the middle of the phase (the second of two 1-second samples; the first is since boot).
top_snapshot() {
  (sleep "$(( duration / 2 ))"; top -b -n 2 -d 1 -w 200 | awk '/^top -/ { n++ } n == 2' | head -30 > "$out/$1-top.txt") &
  TOP_PID=$!
}
# Warns when something else keeps the machine busy (the benchmark needs both cores to itself); with -q,
# first waits (bounded) for a quiet moment.
busy_now() {
  local b0 t0 b1 t1
  read -r b0 t0 < <(machine_ticks); sleep 2; read -r b1 t1 < <(machine_ticks)
  echo $(( 100 * (b1 - b0) * $(nproc) / (t1 - t0 > 0 ? t1 - t0 : 1) ))
}
quiet_check() {
  local busy deadline=$((SECONDS + quiet_wait))
  busy=$(busy_now)
  while [ "$busy" -ge 20 ] && [ "$SECONDS" -lt "$deadline" ]; do sleep 3; busy=$(busy_now); done
  echo "machine busy before the phases: ${busy}% of $(( $(nproc) * 100 ))%" | tee -a "$out/machine.txt"
  [ "$busy" -lt 20 ] || echo "WARNING: the machine is not idle; results will be noisy" | tee -a "$out/machine.txt" >&2
}

# ---- crema's statements, held to the pgbench files ----
# PostgreSQL's statement log, on around the sample lifecycle: every statement, each record prefixed with its backend's
# pid (bench/ingest_statements.py reads it so). Set with ALTER SYSTEM and a reload, so crema's open connections log too.
statement_log_on() {
  psql "$conninfo" -XAq -v ON_ERROR_STOP=1 -c "ALTER SYSTEM SET log_statement = 'all'" \
    -c "ALTER SYSTEM SET log_line_prefix = '<<%p>> '" -c "SELECT pg_reload_conf()" > /dev/null
  sleep 0.5  # each backend reads the new settings before its next command
  log_offset=$(stat -c %s "$cluster/postgres.log")
}
statement_log_off() {
  psql "$conninfo" -XAq -v ON_ERROR_STOP=1 -c "ALTER SYSTEM RESET log_statement" -c "ALTER SYSTEM RESET log_line_prefix" \
    -c "SELECT pg_reload_conf()" > /dev/null
  tail -c +$((log_offset + 1)) "$cluster/postgres.log" > "$out/sample-statements.log"
}
# Refuses the run when a pgbench file no longer sends what crema sends (bench/ingest_statements.py says where).
check_statements() {
  log "the pgbench files against crema's statements (sample-statements.log)"
  python3 bench/ingest_statements.py "$out/sample-statements.log" bench/ingest.pgbench.sql bench/ingest-pipelined.pgbench.sql \
    2>&1 | tee "$out/statements.txt" | tee -a "$out/run.log" || {
    echo "refusing to run: the two sides would not run the same statements; make bench/ingest*.pgbench.sql send what" \
      "crema sends (its statement log of the sample lifecycle is $out/sample-statements.log)" >&2
    exit 1
  }
}

# ---- sample bodies for pgbench's constants, from one lifecycle through Crema ----
capture_bodies() {
  local eta id code
  eta=$(date -u -d '+10 min' +%Y-%m-%dT%H:%M:%SZ)
  post() { # post PATH KEY IDEMPOTENCY BODY
    curl -s -m 5 -X POST "http://127.0.0.1:$port$1" -H "Authorization: Bearer $2" -H "Idempotency-Key: $3" \
      -H 'Content-Type: application/json' -d "$4"
  }
  q() { psql "$conninfo" -XAt -v ON_ERROR_STOP=1 -c "$1"; }
  # JSON re-encoded compactly with sorted keys, as Crema sends it (jsonb's text has spaces and its own order).
  statement_log_on
  compact() { python3 -c 'import json, sys; print(json.dumps(json.loads(sys.stdin.read()), separators=(",", ":"), sort_keys=True, ensure_ascii=False))'; }
  # The stored projection after each step.
  projection() { q "SELECT projection::text FROM orders WHERE order_id = '$id'" | compact; }
  id=$(post /v1/orders "$BENCH_POS_KEY" "sample-t1-1" \
    "{\"store_id\":\"s1\",\"pos_ref\":\"T-$(date +%s)-t1-1\",\"customer_ref\":\"c-1\",\"display_name\":\"Ana\",\"locale\":\"en\",\"items\":[{\"name\":\"Latte\",\"quantity\":1}],\"eta\":\"$eta\"}" \
    | sed -n 's/.*"id":"\([^"]*\)".*/\1/p')
  [ -n "$id" ] || { statement_log_off; echo "could not place the sample order" >&2; return 1; }
  local proj_queued proj_preparing proj_ready proj_picked_up
  proj_queued=$(projection)
  post "/v1/orders/$id/events" "$BENCH_BARISTA_KEY" sample-t1-2 '{"type":"started","barista":"Sam"}' > /dev/null
  proj_preparing=$(projection)
  post "/v1/orders/$id/events" "$BENCH_BARISTA_KEY" sample-t1-3 '{"type":"ready"}' > /dev/null
  proj_ready=$(projection)
  post "/v1/orders/$id/events" "$BENCH_POS_KEY" sample-t1-4 '{"type":"picked_up"}' > /dev/null
  proj_picked_up=$(projection)
  statement_log_off
  answer() { q "SELECT k.response_body FROM order_events e JOIN idempotency_keys k ON k.tenant_id = e.tenant_id AND k.store_id = e.store_id
                AND k.idempotency_key = e.idempotency_key AND k.scope = e.actor_role
                WHERE e.order_id = '$id' AND e.version = $1"; }
  [ "$(q "SELECT version FROM orders WHERE order_id = '$id'")" = 4 ] || { echo "sample lifecycle incomplete" >&2; return 1; }
  # The pgbench files mirror a plan without targets (bench/lifecycle.lua registers no token): one skipped
  # "no_targets" outbox row per event and nothing superseded. Check that this is what Crema wrote.
  local outbox
  outbox=$(q "SELECT count(*) FILTER (WHERE state = 'skipped' AND reason_code = 'no_targets' AND target_id IS NULL)
                     || ' of ' || count(*) FROM delivery_outbox WHERE order_id = '$id'")
  [ "$outbox" = "4 of 4" ] || { echo "the sample lifecycle's outbox rows are not one no_targets skip per event ($outbox):" \
    "bench/ingest*.pgbench.sql mirror only that plan" >&2; return 1; }
  pgbench_defines=(
    -D stage=0
    -D "eta=$(q "SELECT to_char(eta AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') || '+00' FROM orders WHERE order_id = '$id'")"
    -D "items=$(q "SELECT items::text FROM orders WHERE order_id = '$id'" | compact)"
    -D "placed_data=$(q "SELECT data::text FROM order_events WHERE order_id = '$id' AND version = 1" | compact)"
    -D "placed_request=$(q "SELECT request_body FROM idempotency_keys WHERE idempotency_key = 'sample-t1-1'")"
    -D "resp_queued=$(answer 1)" -D "resp_preparing=$(answer 2)" -D "resp_ready=$(answer 3)" -D "resp_picked_up=$(answer 4)"
    -D "proj_queued=$proj_queued" -D "proj_preparing=$proj_preparing" -D "proj_ready=$proj_ready"
    -D "proj_picked_up=$proj_picked_up"
    -D "skip_reason_code=$(q "SELECT reason_code FROM delivery_outbox WHERE order_id = '$id' AND order_version = 1")"
    -D "skip_reason=$(q "SELECT reason FROM delivery_outbox WHERE order_id = '$id' AND order_version = 1")"
  )
  printf '%s\n' "${pgbench_defines[@]}" > "$out/pgbench-defines.txt"
}

checkpoint() {
  [ "$analyze" = yes ] && psql "$conninfo" -XAq -c ANALYZE
  psql "$conninfo" -XAq -c CHECKPOINT
}

# ---- phases ----
phase_http() {
  [ -n "$SERVE_PID" ] || serve
  log "HTTP warm-up ${warmup}s (wrk -t $threads -c $concurrency)"
  POS_KEY=$BENCH_POS_KEY BARISTA_KEY=$BENCH_BARISTA_KEY RUN_ID="w$stamp" \
    timeout $((warmup + 30)) wrk -t "$threads" -c "$concurrency" -d "${warmup}s" --latency -s bench/lifecycle.lua \
    "http://127.0.0.1:$port" > "$out/wrk-warmup.txt" 2>&1
  checkpoint
  pg_writes_begin "$conninfo" "$out" http 10.5  # crema's connections stay open: their warm-up counts are reported by then
  log "HTTP measured ${duration}s"
  top_snapshot http
  cpu_begin
  # crema's own context switches and CPU over the measured phase (issue #13: at most 4 switches per event).
  local perf_pid=""
  if command -v perf > /dev/null; then
    perf stat -e context-switches,cpu-migrations,task-clock -p "$SERVE_PID" -o "$out/crema-perf.txt" -- sleep "$duration" 2> /dev/null &
    perf_pid=$!
  fi
  thread_switches "$SERVE_PID" > "$out/crema-threads-begin.txt"
  POS_KEY=$BENCH_POS_KEY BARISTA_KEY=$BENCH_BARISTA_KEY RUN_ID="m$stamp" \
    /usr/bin/time -f '%U %S' -o "$out/wrk-time.txt" \
    timeout $((duration + 30)) wrk -t "$threads" -c "$concurrency" -d "${duration}s" --latency -s bench/lifecycle.lua \
    "http://127.0.0.1:$port" > "$out/wrk.txt" 2>&1
  cpu_end http "$out/wrk-time.txt"
  thread_switches "$SERVE_PID" > "$out/crema-threads-end.txt"
  [ -n "$perf_pid" ] && { wait "$perf_pid" || true; }
  wait "$TOP_PID" || true
  grep -E '^(events_per_s|latency_p|non2xx|socket_errors|lifecycles)' "$out/wrk.txt" | tee -a "$out/run.log"
  stop_serve
  settle  # crema's backends report their counters as they exit
  pg_writes_end "$conninfo" "$cluster/data" "$out" http event rows:order_events
}

# phase_pgbench NAME SCRIPT: one pgbench side (NAME "pgbench" runs bench/ingest.pgbench.sql, "pgbench-pipelined"
# bench/ingest-pipelined.pgbench.sql); outputs NAME.txt, NAME-log.*, NAME-cpu.txt, NAME-top.txt.
phase_pgbench() {
  local name=$1 script=$2
  log "$name warm-up ${warmup}s (-c $concurrency -j $threads -M prepared, $script), crema serve stopped"
  timeout $((warmup + 60)) "$pgbench" "$conninfo" -n -M prepared -c "$concurrency" -j "$threads" -T "$warmup" \
    -f "$script" "${pgbench_defines[@]}" > "$out/$name-warmup.txt" 2>&1
  checkpoint
  pg_writes_begin "$conninfo" "$out" "$name"  # the warm-up's pgbench backends have exited, so reported
  log "$name measured ${duration}s"
  top_snapshot "$name"
  cpu_begin
  (cd "$out" && /usr/bin/time -f '%U %S' -o "$name-time.txt" \
    timeout $((duration + 60)) "$pgbench" "$conninfo" -n -M prepared -c "$concurrency" -j "$threads" -T "$duration" -r \
    --log --log-prefix="$name-log" -f "$OLDPWD/$script" "${pgbench_defines[@]}" > "$name.txt" 2>&1)
  cpu_end "$name" "$out/$name-time.txt"  # after settle: pgbench's backends have exited
  pg_writes_end "$conninfo" "$cluster/data" "$out" "$name" event rows:order_events
  wait "$TOP_PID" || true
  grep -E '^(tps|latency average|number of failed)' "$out/$name.txt" | tee -a "$out/run.log"
}
phases_pgbench() {
  phase_pgbench pgbench bench/ingest.pgbench.sql
  phase_pgbench pgbench-pipelined bench/ingest-pipelined.pgbench.sql
}

# ---- crema's instructions per event (callgrind) ----
# A count of the instructions crema serve runs per event: what a change to crema is judged by, because it does not
# move with the machine's load as CPU time does. crema serve runs under callgrind with instrumentation off (start-up,
# migration, the warm-up: not counted); bench/lifecycles.py then sends exactly LIFECYCLES lifecycles on 2 keep-alive
# connections (BENCH_COUNT_CONNECTIONS) between `callgrind_control -i on` and `--dump=load`, and the window's order_events rows divide the
# count. Everything crema does in that window is in it: the HTTP server, the handlers, the driver, the listener and
# whatever runs on a timer (the idle dump that follows measures that part per second; the count is reported with and
# without it, since a slower window counts more of it). The kernel's side of each system call is not in the count.
# What valgrind 3.19 needs to run a Swift 6.3 server:
# - a copy of the binary without its DWARF 5 debug information, which 3.19 cannot read (it stops at start-up,
#   "unhandled dwarf2 abbrev form code 0x25"); the symbol table stays, and callgrind's costs are per function anyway;
# - bench/sigsuspend_shim.c preloaded: valgrind writes into the mask given to sigsuspend, and libdispatch's signal
#   thread gives it a read-only one (valgrind dies of its own SIGSEGV a few seconds in).
# The count repeats only when the process sees the same thing: an empty environment but for crema's settings,
# SWIFT_DETERMINISTIC_HASHING=1 (the seed changes Dictionary and Set work), `/` as its folder and a binary path of
# fixed length (they move the stack, as bench/core.sh found). What is left moves with the wall clock: the timers'
# share (hence the count without it) and how the tasks interleave, so counts of one binary spread over about 1 %
# without the timers (docs/benchmarks.md). BENCH_VALGRIND_OPTIONS=--fair-sched=yes did not narrow that (1.1 % over
# five runs against 1.3 % over six) and made the windows longer here.
phase_count() {
  if ! command -v valgrind > /dev/null; then
    log "instructions per event: not measured (valgrind is missing: apt-get install -y valgrind)"
    return 0
  fi
  local conns=${BENCH_COUNT_CONNECTIONS:-2} warm=20 idle=10 e0 e1 vg
  count_scratch=$(mktemp -d /tmp/crema-count.XXXXXX)
  strip -g -o "$count_scratch/crema" "$CREMA"
  cc -O2 -shared -fPIC -o "$count_scratch/sigsuspend_shim.so" bench/sigsuspend_shim.c
  vg=$(command -v valgrind)
  log "instructions per event: crema serve under callgrind, $warm lifecycles uncounted, then $count_lifecycles counted ($conns connections)"
  (cd / && exec env -i PATH=/usr/bin:/bin SWIFT_DETERMINISTIC_HASHING=1 LD_PRELOAD="$count_scratch/sigsuspend_shim.so" \
    CREMA_RATE_LIMIT=0 CREMA_DATABASE_URL="$conninfo" CREMA_API_KEYS="$BENCH_API_KEYS" CREMA_HTTP_HOST=127.0.0.1 \
    CREMA_HTTP_PORT="$port" CREMA_DB_POOL_SIZE="$conns" LOG_LEVEL=warning \
    "$vg" --tool=callgrind --instr-atstart=no --separate-threads=yes ${BENCH_VALGRIND_OPTIONS:-} \
    --callgrind-out-file="$out/callgrind.serve.out" "$count_scratch/crema" serve) \
    >> "$out/count-serve.log" 2>&1 &
  SERVE_PID=$!
  wait_ready "$port" 120 || { tail -20 "$out/count-serve.log" >&2; exit 1; }
  drive() { # drive LIFECYCLES RUN_ID OUTPUT
    python3 bench/lifecycles.py --port "$port" --lifecycles "$1" --connections "$conns" --run-id "$2" \
      --pos-key "$BENCH_POS_KEY" --barista-key "$BENCH_BARISTA_KEY" > "$3" || {
      cat "$3" >&2; echo "the counted load failed: the count is not valid" >&2; exit 1; }
  }
  events_now() { psql "$conninfo" -XAt -v ON_ERROR_STOP=1 -c "SELECT count(*) FROM order_events"; }
  drive "$warm" "cw$stamp" "$out/count-warmup.json"
  e0=$(events_now)
  callgrind_control --instr=on "$SERVE_PID" > "$out/count-control.log" 2>&1
  drive "$count_lifecycles" "cm$stamp" "$out/count-load.json"
  callgrind_control --dump=load "$SERVE_PID" >> "$out/count-control.log" 2>&1
  local idle_from idle_to
  idle_from=$(date +%s.%N)
  e1=$(events_now)
  sleep "$idle"  # nothing sent: what crema runs on its own (timers, polls) in about $idle seconds
  callgrind_control --dump=idle "$SERVE_PID" >> "$out/count-control.log" 2>&1
  idle_to=$(date +%s.%N)
  idle=$(awk -v from="$idle_from" -v to="$idle_to" 'BEGIN { printf "%.3f", to - from }')
  callgrind_control --instr=off "$SERVE_PID" >> "$out/count-control.log" 2>&1
  stop_serve
  python3 - "$out" "$((e1 - e0))" "$((4 * count_lifecycles))" "$idle" "$conns" <<'PY' | tee "$out/count.txt" | tee -a "$out/run.log"
import glob, json, re, sys
out, events, expected, idle, connections = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
def dump(trigger):
    """The files of one dump (one per thread: --separate-threads) and their total."""
    paths, total = [], 0
    for path in sorted(glob.glob(f"{out}/callgrind.serve.out.*")):
        text = open(path, errors="replace").read()
        if re.search(rf"^desc: Trigger: .*\b{trigger}\b", text, re.M):
            paths.append(path)
            total += int(re.search(r"^totals: (\d+)", text, re.M).group(1))
    if not paths:
        sys.exit(f"no callgrind dump '{trigger}' in {out}")
    return paths, total
load, load_ir = dump("load")
_, idle_ir = dump("idle")
seconds = json.load(open(f"{out}/count-load.json"))["seconds"]
print(f"count_events {events}")
print(f"count_connections {connections}")
print(f"count_valid {'yes' if events == expected else 'NO (' + str(expected) + ' expected)'}")
print(f"count_instructions {load_ir}")
print(f"count_per_event {load_ir // events if events else 0}")
print(f"count_seconds {seconds}")
idle_per_event = int(idle_ir / idle * seconds / events) if events else 0
print(f"count_idle_per_event {idle_per_event}")
print(f"count_net_per_event {load_ir // events - idle_per_event if events else 0}")
print(f"count_dump {' '.join(load)}")
PY
  grep -q '^count_valid yes' "$out/count.txt" || { echo "the counted window did not add the events it sent" >&2; exit 1; }
  # shellcheck disable=SC2046 # one callgrind file per thread, none with a space in its name
  python3 bench/ingest_profile.py "$((e1 - e0))" $(sed -n 's/^count_dump //p' "$out/count.txt") | tee "$out/profile.txt"
}

log "crema serve (pool $concurrency) on 127.0.0.1:$port; stores s1..s8; one sample lifecycle"
quiet_check
serve
create_stores "$port" 8
capture_bodies
# With -C the coordinator's log also holds the parts Citus runs of a statement it plans in parts, as statements of
# their own, so the check runs on plain PostgreSQL only (bench/ingest.sh -s); the binary and its SQL are the same.
if [ "$citus" = yes ]; then log "statement check: not on Citus (its log splits statements); bench/ingest.sh -s holds it"; else check_statements; fi
[ "$statements_only" = yes ] && { log "statements only (-s): done"; exit 0; }
if [ "$citus" = yes ]; then
  # The pgbench files stand server-computed values (now() and intervals) where crema binds its clock, and Citus refuses
  # some of them on distributed tables (a STABLE function in an ON CONFLICT's WHERE): only the HTTP side runs.
  phase_http
elif [ "$count_only" = yes ]; then
  stop_serve
elif [ "$order" = pgbench-first ]; then
  stop_serve
  phases_pgbench
  phase_http
else
  phase_http
  phases_pgbench
fi
[ "$count_lifecycles" -gt 0 ] && phase_count

# Every index's scans over the whole run (set-up, warm-ups, measured sides, the count), before the consistency check
# adds its own: an index no statement of the run used shows idx_scan 0.
if [ "$count_only" = no ] && [ "$citus" = no ]; then
  pg_writes_snapshot "$conninfo" "$out/final-writes.json"
  python3 bench/pg_writes.py indexes "$out/final-writes.json" "$out/http-writes.json" "$out/pgbench-writes.json" \
    "$out/pgbench-pipelined-writes.json" > "$out/indexes.txt"
fi

log "consistency check"
consistent=yes
scripts/check-consistency "$conninfo" > "$out/consistency.txt" 2>&1 || consistent=no
tail -1 "$out/consistency.txt"
psql "$conninfo" -XAt -c "SELECT 'orders ' || count(*) FROM orders" -c "SELECT 'events ' || count(*) FROM order_events" >> "$out/run.log"

# crema's instructions per event, as the summary below prints it (-I: the only number).
count_line() {
  [ -s "$out/count.txt" ] || return 0
  awk '{ v[$1] = $2 } END { printf "crema instructions per event: %d (callgrind Ir over %d events on %d connections, %.1f s; without timers and polls, %d)\n",
    v["count_per_event"], v["count_events"], v["count_connections"], v["count_seconds"], v["count_net_per_event"] }' "$out/count.txt"
}
if [ "$citus" = yes ]; then
  python3 - "$out" "$consistent" "$concurrency" <<'EOF' | tee "$out/summary.txt"
import sys
out, consistent, concurrency = sys.argv[1], sys.argv[2], int(sys.argv[3])
wrk = dict(l.split(None, 1) for l in open(f"{out}/wrk.txt").read().split("-- lifecycle.lua summary --")[1].splitlines() if l and not l.startswith(" "))
t = {k: int(v) for k, v in (kv.split("=") for kv in open(f"{out}/http-cpu.txt").read().split())}
events = int(wrk["requests"])
per = lambda v: 10 * v / events  # ticks are 10 ms
wall = t["total"] / t["cores"]
other = t["busy"] - t["postgres"] - t["crema"] - t["client"]
print(f"concurrency {concurrency}, on Citus (a coordinator and two workers, this machine)")
print(f"HTTP (wrk, lifecycle.lua): {float(wrk['events_per_s']):.0f} events/s, p50 {float(wrk['latency_p50_ms']):.2f} ms, p99 {float(wrk['latency_p99_ms']):.2f} ms")
print(f"postgres CPU {per(t['postgres']):.3f} ms/event: coordinator {per(t['postgres_coordinator']):.3f}, workers {per(t['postgres'] - t['postgres_coordinator']):.3f};"
      f" crema {per(t['crema']):.3f} ms/event; busy {100 * t['busy'] / wall:.0f}% of {100 * t['cores']}%, other {100 * other / wall:.0f}%")
valid = int(wrk["non2xx"]) == 0 and consistent == "yes" and wrk["socket_errors"].strip() == "connect=0 read=0 write=0 timeout=0"
print("run " + ("valid" if valid else "INVALID") + ("; NOISY: something else used > 15 % of a core" if 100 * other / wall > 15 else ""))
sys.exit(0 if valid else 1)
EOF
  exit
fi
if [ "$count_only" = yes ]; then
  { count_line; echo "run $([ "$consistent" = yes ] && echo valid || echo INVALID) (instructions only, -I)"; } | tee "$out/summary.txt"
  [ "$consistent" = yes ]
  exit
fi

# ---- summary ----
python3 - "$out" "$consistent" "$concurrency" <<'EOF' | tee "$out/summary.txt"
import glob, json, os, re, sys
out, consistent, concurrency = sys.argv[1], sys.argv[2], int(sys.argv[3])
wrk = dict(l.split(None, 1) for l in open(f"{out}/wrk.txt").read().split("-- lifecycle.lua summary --")[1].splitlines() if l and not l.startswith(" "))

def pgbench(name):
    """One pgbench side: tps, its per-event latencies (from --log), failed transactions, whether a client aborted."""
    text = open(f"{out}/{name}.txt").read()
    lat = []
    for path in glob.glob(f"{out}/{name}-log.*"):
        for line in open(path):
            f = line.split()
            if len(f) >= 6 and f[2].isdigit():
                lat.append(int(f[2]))
    lat.sort()
    tps = re.search(r"tps = ([0-9.]+) \(without", text)
    failed = re.search(r"number of failed transactions: (\d+)", text)
    return {"tps": float(tps.group(1)) if tps else 0.0, "lat": lat, "failed": int(failed.group(1)) if failed else -1,
            "aborted": "aborted" in text}

def pct(lat, p):
    return lat[min(len(lat) - 1, int(round(p / 100 * len(lat) + 0.5)) - 1)] / 1000 if lat else float("nan")

plain, piped = pgbench("pgbench"), pgbench("pgbench-pipelined")
http = float(wrk["events_per_s"])
non2xx = int(wrk["non2xx"])
sock = wrk["socket_errors"].strip()
pgbench_ok = all(side["failed"] == 0 and not side["aborted"] and side["tps"] > 0 for side in (plain, piped))
valid = non2xx == 0 and pgbench_ok and consistent == "yes" and sock == "connect=0 read=0 write=0 timeout=0"
ratio = lambda side: http / side["tps"] if side["tps"] else float("nan")

def cpu(name, events):
    t = dict(kv.split("=") for kv in open(f"{out}/{name}-cpu.txt").read().split())
    t = {k: int(v) for k, v in t.items()}
    wall = t["total"] / t["cores"]  # ticks of one core during the phase
    other = t["busy"] - t["postgres"] - t["crema"] - t["client"]
    share = lambda v: f"{100 * v / wall:4.0f}%"
    per = lambda v: 10 * v / events if events else float("nan")  # ticks are 10 ms
    split = (f": user {per(t['crema_user']):.3f}, system {per(t['crema_system']):.3f}"
             if t['crema'] and "crema_user" in t else "")
    nodes = (f" [{t['nodes']} nodes: coordinator {per(t['postgres_coordinator']):.3f}, workers {per(t['postgres'] - t['postgres_coordinator']):.3f} ms/event]"
             if t.get("nodes", 1) > 1 else "")
    line = (f"{name:17} busy {share(t['busy'])} of {100 * t['cores']}% | postgres {share(t['postgres'])} ({per(t['postgres']):.3f} ms/event){nodes}"
            f" | crema {share(t['crema'])} ({per(t['crema']):.3f} ms/event{split}) | client {share(t['client'])} | other {share(other)}")
    return line, 100 * other / wall, per(t["postgres"])

cpu_http, cpu_plain, cpu_piped = cpu("http", int(wrk["requests"])), cpu("pgbench", len(plain["lat"])), cpu("pgbench-pipelined", len(piped["lat"]))
noisy = any(c[1] > 15 for c in (cpu_http, cpu_plain, cpu_piped))
print(f"concurrency {concurrency}")
print(f"{'':36}{'events/s':>10}{'p50 ms':>9}{'p99 ms':>9}{'postgres CPU ms/event':>23}")
print(f"{'HTTP (wrk, lifecycle.lua)':36}{http:10.0f}{float(wrk['latency_p50_ms']):9.2f}{float(wrk['latency_p99_ms']):9.2f}{cpu_http[2]:23.3f}")
for label, side, c in (("pgbench plain (1 trip/statement)", plain, cpu_plain), ("pgbench pipelined (Crema's flights)", piped, cpu_piped)):
    print(f"{label:36}{side['tps']:10.0f}{pct(side['lat'], 50):9.2f}{pct(side['lat'], 99):9.2f}{c[2]:23.3f}")
for label, side in (("HTTP/plain", plain), ("HTTP/pipelined", piped)):
    r = ratio(side)
    print(f"ratio {label}: {r:.1%} (target >= 70 %: {'met' if r >= 0.7 else 'NOT met'})")
print(f"pgbench events logged: plain {len(plain['lat'])}, pipelined {len(piped['lat'])}; failed: plain {plain['failed']}, pipelined {piped['failed']}"
      f"{'; a pgbench client ABORTED' if plain['aborted'] or piped['aborted'] else ''}; HTTP non-2xx: {non2xx}, socket errors: {sock};"
      f" consistency: {consistent}")
print("cpu (% of one core; ms of CPU per event):")
for c in (cpu_http, cpu_plain, cpu_piped): print("  " + c[0])
perf = open(f"{out}/crema-perf.txt").read() if os.path.exists(f"{out}/crema-perf.txt") else ""
switches = re.search(r"([0-9,]+)\s+context-switches", perf)
clock = re.search(r"([0-9.,]+) msec task-clock", perf)
events = int(wrk["requests"])
if switches and clock and events:
    print(f"  crema (perf stat over the measured phase): {int(switches.group(1).replace(',', '')) / events:.1f} context switches/event,"
          f" {float(clock.group(1).replace(',', '')) / events:.3f} ms task-clock/event (targets: <= 4 and <= 0.25 ms)")
def threads(name):
    path = f"{out}/crema-threads-{name}.txt"
    rows = [line.rstrip("\n").split("|") for line in open(path)] if os.path.exists(path) else []
    # A thread that ended between listing and reading has empty counts: left out, not counted as zero.
    return {r[0]: (r[1], int(r[2]), int(r[3])) for r in rows if len(r) == 4 and r[2].isdigit() and r[3].isdigit()}
begin, end = threads("begin"), threads("end")
if end and events:
    groups = {}
    for tid, (comm, vol, nonvol) in end.items():
        _, vol0, nonvol0 = begin.get(tid, (comm, 0, 0))
        group = ("HTTP event loops" if comm.startswith("NIO-") else "driver loop" if comm == "crema-pg-loop"
                 else "listener" if comm == "crema-pg-listen" else "task pool and Dispatch" if "qos" in comm else "other")
        g = groups.setdefault(group, [0, 0])
        g[0] += vol - vol0
        g[1] += nonvol - nonvol0
    voluntary = sum(g[0] for g in groups.values()) / events
    preempted = sum(g[1] for g in groups.values()) / events
    detail = ", ".join(f"{k} {v[0] / events:.1f}" for k, v in sorted(groups.items(), key=lambda kv: -kv[1][0]))
    print(f"  crema's threads (/proc): {voluntary:.1f} voluntary switches/event ({detail}); {preempted:.1f} preempted/event")
print("  (HTTP's postgres share includes the outbox queries of crema serve's dispatcher; pgbench runs only the event transactions)")
if os.path.exists(f"{out}/count.txt"):
    v = dict(line.split(None, 1) for line in open(f"{out}/count.txt") if line.strip())
    print(f"  crema instructions per event: {int(v['count_per_event']):,} (callgrind Ir over {int(v['count_events'])} events on {int(v['count_connections'])} connections,"
          f" {float(v['count_seconds']):.1f} s; without timers and polls, which grow with the window's length:"
          f" {int(v['count_net_per_event']):,}; counts, so they do not move with the machine's load)")
def writes(name):
    path = f"{out}/{name}-writes.json"
    return json.load(open(path)) if os.path.exists(path) else None
sides = [writes(name) for name in ("http", "pgbench", "pgbench-pipelined")]
if all(sides):
    print("what PostgreSQL wrote per event (bench/pg_writes.py; events = rows the measured window added to order_events;"
          " index entries = btree leaf insertions counted in the window's WAL):")
    for name in ("http", "pgbench", "pgbench-pipelined"):
        print(open(f"{out}/{name}-writes.txt").read(), end="")
    print("  (HTTP's window also holds crema serve's dispatcher polls, and both start right after a CHECKPOINT: full-page images)")
    print("indexes of the tables written: idx_scan over the whole run (0: no statement used it), entries per event per side:")
    print(open(f"{out}/indexes.txt").read(), end="")
print("run " + ("valid" if valid else "INVALID") + ("; NOISY: something else used > 15 % of a core" if noisy else ""))
def per_event(side, key):
    return f"{side[key] / side['events']:.3f}" if side and side["events"] and side.get(key) is not None else ""
hot_share = f"{sides[0]['hot_updates'] / sides[0]['updates']:.3f}" if sides[0] and sides[0]["updates"] else ""
# Columns 1-11 as before (pgbench = the plain side); then the pipelined side and PostgreSQL CPU ms/event of each side;
# then the HTTP side's WAL bytes (LSN distance) and index entries per event and its HOT share of updates (0..1).
with open(os.path.join(os.path.dirname(out), "ingest-history.tsv"), "a") as h:
    h.write("\t".join(map(str, [os.path.basename(out), concurrency, round(http), wrk["latency_p50_ms"], wrk["latency_p99_ms"],
        round(plain["tps"]), f"{pct(plain['lat'], 50):.3f}", f"{pct(plain['lat'], 99):.3f}", f"{ratio(plain):.3f}",
        "valid" if valid else "INVALID", "noisy" if noisy else "quiet",
        round(piped["tps"]), f"{pct(piped['lat'], 50):.3f}", f"{pct(piped['lat'], 99):.3f}", f"{ratio(piped):.3f}",
        f"{cpu_http[2]:.3f}", f"{cpu_plain[2]:.3f}", f"{cpu_piped[2]:.3f}",
        per_event(sides[0], "lsn_bytes"), per_event(sides[0], "index_entries"), hot_share])) + "\n")
sys.exit(0 if valid else 1)
EOF
