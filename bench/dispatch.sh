#!/usr/bin/env bash
# Dispatcher throughput (docs/design.md §8: at least 3x the Python aioapns client, same pushes, same simulator).
#
# Core for core (issue #14): by default each client runs alone on core 0 (taskset) and everything else -- the
# simulator, PostgreSQL, this script and its psql polls -- on core 1, for both sides, so the ratio compares the
# clients and not how they share the machine with the server they talk to. -u runs unpinned (the old set-up).
#
# One private PostgreSQL cluster and one `crema apns-sim` (HTTP/2 + TLS, its own P-256 key) for the whole run.
# Each round gets a fresh database (crema migrate, then bench/outbox-fixture.sql: N pending alert pushes, each
# to its own customer token; VACUUM ANALYZE; CHECKPOINT), and then both sides, one after the other, each with
# the machine to itself and the simulator's records cleared first:
#   crema:   `crema dispatch --batch-size B --workers W` claims, sends and records the outbox until no row is
#            pending or in flight (polled every 0.1 s); then stopped. Every row must be `sent`.
#   aioapns: bench/apns_peer.py reads the same N rows (token, body, priority, collapse id, expiry) and sends
#            them with aioapns 4.0 (max_connections M, C coroutines). Every answer must be 200.
# Both: the simulator must have accepted exactly N requests to N distinct tokens.
# Rounds alternate which side goes first (crema first in odd rounds).
#
# What is timed: preferably the simulator's own clock, from the first accepted request to the last, for both
# sides ("sim"; pushes/s = (N - 1) / span): it leaves out each side's start-up (process and interpreter
# start, crema's migration check, the peer's reading of its rows) the same way and counts one TLS and HTTP/2
# set-up in neither. That needs sub-second receivedAt in GET /sim/requests; when the simulator gives whole
# seconds only, each side's own clock is used instead ("own"): crema from its "Crema dispatcher running" line
# (start-up done, before its first claim) to the last row's sent_at (recorded after the last answer); the
# peer from its first request to its last answer. Both then include the connection set-up. Also reported:
# crema's end to end (process spawn to the last sent_at), its start-up time, and CPU per side (crema
# dispatch, simulator, PostgreSQL, peer) in ms per push.
#
# Sink mode (-k sink, issue #35): the simulator costs about as much per push as either client and, with PostgreSQL,
# fills core 1, so the race above reads the simulator. With -k sink both clients talk instead to Debian's `nghttpd`
# (package nghttp2-server; one thread, on core 1 with PostgreSQL), serving HTTP/2 over TLS with a self-signed
# certificate both trust (crema: CREMA_APNS_URL + CREMA_APNS_CA_FILE; aioapns: --url/--ca-file, as for the
# simulator), and a folder with one empty file per device token, so every POST /3/device/<token> of the fixture is
# answered 200 with an empty body (any other path 404). The sink checks nothing: not the JWT (crema and aioapns
# still sign one, with a throw-away P-256 key the script makes), not the topic, not the headers. It keeps no
# records, so what it received is counted by the kernel: a uprobe on libnghttp2's nghttp2_submit_response (one hit
# per answer) and one on nghttp2_session_server_new (one per connection), counted with `perf stat -p` on the sink
# around each side. Each side must then have been answered exactly N times, on top of its own check (every row
# `sent`; every answer 200); together they mean N requests, one per token. Where uprobes are unavailable, the sink
# runs with -v and its log is counted instead (":status: 200" lines), which costs it a write per log line (reported
# as "counter log"). A side whose count is not N, or cannot be read, makes the run invalid. With no records to time,
# pushes/s is read from each side's own clock ("own", above). The "sim" CPU columns are then the sink's.
#
# Usage: bench/dispatch.sh [-k sim|sink] [-r ROUNDS] [-b BATCH] [-w WORKERS] [-c PEER_CONCURRENCY]
#                          [-m PEER_MAX_CONNECTIONS] [-q WAIT] [-p POLL] [-s] [-u] [N]
#   defaults: N 20000, -r 3, -b 64 -w 2 (crema dispatch's defaults), -c 128 (as many pushes in flight as crema's
#   2 x 64; at 250 and more, aioapns overruns the HTTP/2 connection window and gives up on some pushes),
#   -m 10 (aioapns' default). -q WAIT: before each round, wait up to WAIT s for an idle machine. A side during
#   which other work used more than 15 % of a core is marked NOISY. -p POLL: how often (s, default 0.1) the
#   script asks PostgreSQL whether crema's outbox is drained; each poll is a psql process on core 1, about 15 % of
#   that core at 0.1 s, taken from PostgreSQL and the peer during crema's side only. The time read is the last
#   sent_at either way, so a longer interval changes no clock, only that load.
#   -s: where PostgreSQL's time behind crema goes (issue #35). The cluster runs with pg_stat_statements (planning
#   tracked too), and around each crema side the script writes r<R>-crema-statements.tsv (per statement, per push:
#   calls, rows, execution and planning time, shared blocks hit and dirtied, WAL records and bytes; the script's own
#   outbox polls and crema's metric reads are among them) and r<R>-crema-tables.tsv (rows updated and how many of
#   those updates were HOT, and how much each table and index grew); the summary prints the main statements. The
#   module's bookkeeping costs PostgreSQL a little, so compare CPU with runs without -s. -s also prints what PostgreSQL
#   wrote per push over crema's side (issue #45; bench/pg_writes.py says how each is taken): WAL bytes (the LSN
#   distance, and the statements' wal_bytes and full-page images), index entries per table and per index (btree leaf
#   insertions counted in the side's WAL by pg_waldump, beside the counters' inserts + non-HOT updates), the HOT share
#   of updates, blocks dirtied and written; then every index of the tables written with its idx_scan over crema's side
#   (0: unused). Files r<R>-crema-writes.txt, r<R>-crema-writes.json, r<R>-crema-indexes.txt.
# Environment: CREMA_BIN (default .build-release/release/crema), BENCH_SIM_PORT (default 18443; the sink's too).
# BENCH_SINK_COUNTER=log forces the sink's log counter.
# Needs postgresql-15 (psql; pg_waldump for -s), curl, python3 (venv with aioapns from PyPI: .crema/venv, made on first
# use); -k sink also nghttpd (nghttp2-server) and openssl, installed with apt-get when missing (the run is refused when
# they cannot be), and perf with uprobes (else the log counter).
# Raw outputs: bench/results/dispatch-n<N>-<time>/ (git-ignored); one line per round in
# bench/results/dispatch-history.tsv. Exits 1 when a round is invalid, never because of the ratio.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh

rounds=3 batch=64 workers=2 peer_concurrency=128 peer_connections=10 quiet_wait=0 pinned=1 mode=sim poll=0.1 statements=0
while getopts "k:r:b:w:c:m:q:p:su" opt; do
  case "$opt" in
    k) mode=$OPTARG ;;
    r) rounds=$OPTARG ;;
    b) batch=$OPTARG ;;
    w) workers=$OPTARG ;;
    c) peer_concurrency=$OPTARG ;;
    m) peer_connections=$OPTARG ;;
    q) quiet_wait=$OPTARG ;;
    p) poll=$OPTARG ;;
    s) statements=1 ;;
    u) pinned=0 ;;
    *) sed -n '2,70p' "$0" >&2; exit 2 ;;
  esac
done
case "$mode" in sim|sink) ;; *) echo "-k takes sim or sink" >&2; exit 2 ;; esac
# Without its peer a side has nothing to send to: the sink's programs are installed first, or the run is refused.
if [ "$mode" = sink ]; then
  bench_require nghttpd:nghttp2-server openssl:openssl || { echo "refusing to run -k sink without nghttpd and openssl" >&2; exit 1; }
fi
shift $((OPTIND - 1))
n=${1:-20000}
port=${BENCH_SIM_PORT:-18443}
CREMA=$(crema_bin)
PY=$(bench_venv)

if [ "$pinned" = 1 ]; then
  [ "$(nproc)" -ge 2 ] || { echo "pinning needs 2 cores; run with -u" >&2; exit 2; }
  command -v taskset > /dev/null || { echo "pinning needs taskset (util-linux); run with -u" >&2; exit 2; }
  CLIENT_CPU=0 SERVER_CPU=1
  # This script and everything it starts (the cluster, the simulator, psql) inherit core 1; clients go to core 0.
  taskset -cp "$SERVER_CPU" $$ > /dev/null
  CLIENT=(taskset -c "$CLIENT_CPU")
else
  CLIENT=()
fi

bench_workspace dispatch-n"$n"
now() { date +%s.%N; }

{
  machine_info
  echo "python: $("$PY" --version 2>&1); aioapns $("$PY" -c 'import importlib.metadata as m; print(m.version("aioapns"))')"
  echo "N: $n, rounds: $rounds, crema dispatch --batch-size $batch --workers $workers;" \
    "aioapns max_connections $peer_connections, concurrency $peer_concurrency; outbox polled every ${poll} s"
  if [ "$mode" = sink ]; then echo "peer: sink (nghttpd $(nghttpd --version | awk '{ print $NF }'), answers every POST to a fixture token 200, checks nothing)"
  else echo "peer: simulator (crema apns-sim)"; fi
  if [ "$pinned" = 1 ]; then echo "pinned: clients on core $CLIENT_CPU; $mode, PostgreSQL and this script on core $SERVER_CPU"
  else echo "unpinned"; fi
} | tee "$out/machine.txt"

# ---- the sink (-k sink) ----
SINK_COUNTER="" SINK_PROBES_ADDED=0 SINK_PERF_PID=""
# start_sink PORT DIR LOGFILE: a self-signed certificate (a CA naming localhost and 127.0.0.1, as the simulator's),
# a throw-away P-256 signing key for the JWT nobody checks, then nghttpd in the background on 127.0.0.1:PORT with
# DIR/htdocs as its root; exports CREMA_APNS_* for both clients and sets SIM_PID (so the exit trap stops it).
start_sink() {
  local port=$1 dir=$2 log=$3 deadline=$((SECONDS + 30)) lib verbose=()
  command -v nghttpd > /dev/null || { echo "-k sink needs nghttpd (apt-get install nghttp2-server)" >&2; return 1; }
  mkdir -p "$dir/htdocs/3/device"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 7 -keyout "$dir/key.pem" -out "$dir/ca.pem" \
    -subj "/O=Crema/CN=Crema bench sink" -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
    -addext "basicConstraints=critical,CA:TRUE,pathlen:0" -addext "keyUsage=critical,digitalSignature,keyCertSign" \
    -addext "extendedKeyUsage=serverAuth" 2> /dev/null
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$dir/AuthKey_SINK000000.p8" 2> /dev/null
  # The counter: uprobes on the libnghttp2 nghttpd links, counted by perf stat; else nghttpd's own -v log.
  lib=$(readlink -f "$(ldd "$(command -v nghttpd)" | awk '/libnghttp2/ { print $3 }')")
  if [ "${BENCH_SINK_COUNTER:-uprobe}" = uprobe ] && command -v perf > /dev/null && [ -f "$lib" ]; then
    if perf probe -l 2> /dev/null | grep -q 'crema_bench:sink_answer'; then SINK_COUNTER=uprobe
    elif perf probe -q -x "$lib" -a 'crema_bench:sink_answer=nghttp2_submit_response' 2>> "$log" &&
         perf probe -q -x "$lib" -a 'crema_bench:sink_session=nghttp2_session_server_new2' 2>> "$log"; then
      SINK_COUNTER=uprobe SINK_PROBES_ADDED=1
    fi
  fi
  if [ -z "$SINK_COUNTER" ]; then SINK_COUNTER=log verbose=(-v); fi
  # One worker thread (nghttpd's default); 1000 streams per connection as APNs allows, so neither client's
  # in-flight pushes (crema 2 x 64, aioapns 128) wait on the sink's default of 100.
  nghttpd ${verbose[@]+"${verbose[@]}"} -n 1 -m 1000 -a 127.0.0.1 -d "$dir/htdocs" "$port" "$dir/key.pem" "$dir/ca.pem" >> "$log" 2>&1 &
  SIM_PID=$!
  export CREMA_APNS_URL="https://127.0.0.1:$port" CREMA_APNS_CA_FILE="$dir/ca.pem" CREMA_APNS_KEY_FILE="$dir/AuthKey_SINK000000.p8" \
    CREMA_APNS_KEY_ID=SINK000000 CREMA_APNS_TEAM_ID=SINKTEAM00 CREMA_APNS_TOPIC=$BENCH_BUNDLE_ID
  while [ "$SECONDS" -lt "$deadline" ]; do
    kill -0 "$SIM_PID" 2> /dev/null || { echo "nghttpd exited; see $log" >&2; cat "$log" >&2; return 1; }
    [ "$(curl -s -o /dev/null -m 2 -w '%{http_code}' --cacert "$dir/ca.pem" "$CREMA_APNS_URL/sink/ready")" = 404 ] && return 0
    sleep 0.1
  done
  echo "nghttpd did not answer within 30 s" >&2
  return 1
}
# sink_tokens CONNINFO: one empty file per device token of the fixture, so POST /3/device/<token> answers 200.
sink_tokens() {
  find "$out/sink/htdocs/3/device" -type f -delete
  psql "$1" -XAt -c "SELECT token FROM customer_tokens" | (cd "$out/sink/htdocs/3/device" && xargs touch)
}
# sink_begin NAME / sink_end NAME: count the sink's answers and connections between the two; sink_end writes
# NAME-sink-summary.json in the shape of delivery_report.py's sim-summary (records = accepted = answers).
sink_begin() {
  if [ "$SINK_COUNTER" = uprobe ]; then
    perf stat -x, -o "$out/$1-sink-perf.csv" -e crema_bench:sink_answer,crema_bench:sink_session -p "$SIM_PID" > /dev/null 2>&1 &
    SINK_PERF_PID=$!
    sleep 0.5  # perf stat attaches; an answer before then would go uncounted, and the side would fail its count
    kill -0 "$SINK_PERF_PID" 2> /dev/null || { echo "perf stat on the sink exited at once" >&2; SINK_PERF_PID=""; }
  else
    stat -c %s "$out/sink.log" > "$out/$1-sink-offset.txt"
  fi
}
sink_end() {
  local answers="" sessions=""
  if [ "$SINK_COUNTER" = uprobe ]; then
    if [ -n "$SINK_PERF_PID" ]; then kill -INT "$SINK_PERF_PID" 2> /dev/null || true; wait "$SINK_PERF_PID" 2> /dev/null || true; fi
    SINK_PERF_PID=""
    answers=$(awk -F, '$3 == "crema_bench:sink_answer" { print $1 }' "$out/$1-sink-perf.csv" 2> /dev/null)
    sessions=$(awk -F, '$3 == "crema_bench:sink_session" { print $1 }' "$out/$1-sink-perf.csv" 2> /dev/null)
  else
    answers=$(tail -c +$(($(cat "$out/$1-sink-offset.txt") + 1)) "$out/sink.log" | grep -c '^ *:status: 200$' || true)
    sessions=$(tail -c +$(($(cat "$out/$1-sink-offset.txt") + 1)) "$out/sink.log" | grep -c '^SSL/TLS handshake completed$' || true)
  fi
  case "$answers" in ''|*[!0-9]*) answers=null ;; esac
  case "$sessions" in ''|*[!0-9]*) sessions=null ;; esac
  echo "{\"records\": $answers, \"accepted\": $answers, \"distinct_tokens\": null, \"connections\": $sessions," \
    "\"resolution\": \"none\", \"per_s\": null, \"counter\": \"$SINK_COUNTER\"}" > "$out/$1-sink-summary.json"
}
sink_cleanup() {
  [ -n "${SINK_PERF_PID:-}" ] && { kill -INT "$SINK_PERF_PID" 2> /dev/null || true; }
  [ "${SINK_PROBES_ADDED:-0}" = 1 ] && { perf probe -q -d 'crema_bench:*' > /dev/null 2>&1 || true; }
  return 0
}

conninfo=$(start_cluster "$cluster" crema_bench "$out/postgres-start.log")
if [ "$statements" = 1 ]; then
  # The module must be loaded at server start: a restart with it preloaded.
  printf '%s\n' "shared_preload_libraries = 'pg_stat_statements'" "pg_stat_statements.track_planning = on" >> "$cluster/data/postgresql.conf"
  "$CREMA" postgres stop --dir "$cluster" > /dev/null
  conninfo=$(start_cluster "$cluster" crema_bench "$out/postgres-start.log")
  echo "pg_stat_statements: on (-s)" >> "$out/machine.txt"
fi
PEER_SINK_ARGS=()
if [ "$mode" = sim ]; then
  log "fresh PostgreSQL cluster in $cluster; crema apns-sim on 127.0.0.1:$port"
  start_apns_sim "$port" "$out/sim" "$out/sim.log"
else
  trap 'sink_cleanup; bench_cleanup' EXIT
  PEER_SINK_ARGS=(--echo-apns-id)  # aioapns matches a 200 by the echoed apns-id, which nghttpd does not send
  start_sink "$port" "$out/sink" "$out/sink.log"
  log "fresh PostgreSQL cluster in $cluster; sink: nghttpd $(nghttpd --version | awk '{ print $NF }') on 127.0.0.1:$port," \
    "counted by $SINK_COUNTER; the JWT, topic and headers are not checked"
fi
sim_records() { sim_curl GET /sim/requests > "$1"; }
# side_begin NAME / side_end NAME: clear the simulator's records, or start counting the sink's answers; then
# write NAME-sim-summary.json either way.
side_begin() {
  kill -0 "$SIM_PID" 2> /dev/null || { echo "refusing to go on: the $mode (pid $SIM_PID) is not running; see $out/$mode.log" >&2; exit 1; }
  if [ "$mode" = sim ]; then sim_curl DELETE /sim/requests > /dev/null; else sink_begin "$1"; fi
}
side_end() {
  if [ "$mode" = sim ]; then
    sim_records "$out/$1-sim.json"
    python3 bench/delivery_report.py sim-summary "$out/$1-sim.json" > "$out/$1-sim-summary.json"
  else
    sink_end "$1"; cp "$out/$1-sink-summary.json" "$out/$1-sim-summary.json"
  fi
}

# Statement and table counters around crema's side (-s). OUTBOX_TABLES: the tables the dispatcher writes.
OUTBOX_TABLES="'delivery_outbox', 'customer_tokens', 'push_targets', 'webhook_events', 'webhook_deliveries'"
sizes() { # sizes CONNINFO: every table and index of OUTBOX_TABLES with its size in bytes
  psql "$1" -XAt -F $'\t' -c "SELECT c.relname, pg_relation_size(c.oid) FROM pg_class c LEFT JOIN pg_index i ON i.indexrelid = c.oid
      LEFT JOIN pg_class t ON t.oid = i.indrelid WHERE c.relname IN ($OUTBOX_TABLES) OR t.relname IN ($OUTBOX_TABLES) ORDER BY 1"
}
statements_begin() { # statements_begin ROUND
  [ "$statements" = 1 ] || return 0
  psql "$DB" -XAq -c "SELECT pg_stat_statements_reset()" -c "SELECT pg_stat_reset()" > /dev/null
  sizes "$DB" > "$out/r$1-crema-sizes-before.tsv"
  pg_writes_begin "$DB" "$out" "r$1-crema"
}
statements_end() { # statements_end ROUND: after crema has exited (its backends report their counters as they end)
  [ "$statements" = 1 ] || return 0
  sleep 1
  sizes "$DB" > "$out/r$1-crema-sizes-after.tsv"
  psql "$DB" -XA -F $'\t' -c "SELECT calls, rows, round((total_exec_time / $n * 1000)::numeric, 2) AS exec_us_per_push,
      round((total_plan_time / $n * 1000)::numeric, 2) AS plan_us_per_push, round(mean_exec_time::numeric, 3) AS mean_exec_ms,
      round(shared_blks_hit::numeric / $n, 2) AS hit_per_push, round(shared_blks_dirtied::numeric / $n, 3) AS dirtied_per_push,
      round(wal_records::numeric / $n, 2) AS wal_records_per_push, round(wal_bytes / $n, 0) AS wal_bytes_per_push, wal_fpi,
      left(regexp_replace(query, '\s+', ' ', 'g'), 160) AS query
      FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
      ORDER BY total_exec_time + total_plan_time DESC" > "$out/r$1-crema-statements.tsv"
  psql "$DB" -XA -F $'\t' -c "SELECT relname, n_tup_ins, n_tup_upd, n_tup_hot_upd, n_tup_del, seq_scan, idx_scan
      FROM pg_stat_user_tables WHERE relname IN ($OUTBOX_TABLES) ORDER BY relname" > "$out/r$1-crema-tables.tsv"
  join -t $'\t' "$out/r$1-crema-sizes-before.tsv" "$out/r$1-crema-sizes-after.tsv" |
    awk -F '\t' 'BEGIN { print "\nrelation\tbytes before\tbytes after\tgrowth" } { print $1 "\t" $2 "\t" $3 "\t" $3 - $2 }' >> "$out/r$1-crema-tables.tsv"
  pg_writes_end "$DB" "$cluster/data" "$out" "r$1-crema" push "$n"
  python3 bench/pg_writes.py indexes "$out/r$1-crema-writes-after.json" "$out/r$1-crema-writes.json" > "$out/r$1-crema-indexes.txt"
}

prepare() { # prepare ROUND: a fresh database with the fixture; sets DB
  DB=$(new_database "$conninfo" "crema_bench_r$1")
  CREMA_DATABASE_URL="$DB" LOG_LEVEL=warning "$CREMA" migrate >> "$out/migrate.log" 2>&1
  psql "$DB" -XAq -v ON_ERROR_STOP=1 -v n="$n" -v topic="$BENCH_BUNDLE_ID" -f bench/outbox-fixture.sql > /dev/null
  [ "$statements" = 0 ] || psql "$DB" -XAq -v ON_ERROR_STOP=1 -c "CREATE EXTENSION IF NOT EXISTS pg_stat_statements" > /dev/null
  psql "$DB" -XAq -v ON_ERROR_STOP=1 -c "VACUUM ANALYZE" -c CHECKPOINT > /dev/null
  [ "$(outbox_open "$DB")" = "$n" ] || { echo "the fixture did not load $n pending rows" >&2; return 1; }
  [ "$mode" = sim ] || sink_tokens "$DB"
}

side_crema() { # side_crema ROUND
  local r=$1 t0 cr sim0 sim1 pg0 pg1 m0 m1 mt0 mt1 running
  side_begin "r$r-crema"
  statements_begin "$r"
  sim0=$(ticks_of "$SIM_PID"); pg0=$(cluster_ticks "$cluster"); read -r m0 mt0 < <(machine_ticks)
  t0=$(now)
  # Each output line gets the time it was read (so "Crema dispatcher running" marks the end of start-up).
  CREMA_DATABASE_URL="$DB" LOG_LEVEL=warning ${CLIENT[@]+"${CLIENT[@]}"} "$CREMA" dispatch --batch-size "$batch" --workers "$workers" \
    > >(while IFS= read -r line; do printf '%s %s\n' "$(date +%s.%N)" "$line"; done > "$out/r$r-crema.log") 2>&1 &
  DISPATCH_PID=$!
  wait_drained "$DB" 600 "$poll"
  cr=$(ticks_of "$DISPATCH_PID"); sim1=$(ticks_of "$SIM_PID"); pg1=$(cluster_ticks "$cluster"); read -r m1 mt1 < <(machine_ticks)
  stop_pid "$DISPATCH_PID"; DISPATCH_PID=""
  statements_end "$r"
  side_end "r$r-crema"
  psql "$DB" -XAt -F ' ' -c "SELECT count(*) FILTER (WHERE state = 'sent'), count(*),
      extract(epoch FROM min(sent_at)), extract(epoch FROM max(sent_at)), max(attempts) FROM delivery_outbox" \
    > "$out/r$r-crema-db.txt"
  running=$(awk '/dispatcher running/ { print $1; exit }' "$out/r$r-crema.log")
  echo "t0=$t0 running=${running:-0} crema=$cr sim=$((sim1 - sim0)) postgres=$((pg1 - pg0)) peer=0 busy=$((m1 - m0)) total=$((mt1 - mt0))" > "$out/r$r-crema-cpu.txt"
}

side_peer() { # side_peer ROUND
  local r=$1 sim0 sim1 pg0 pg1 peer status=0 m0 m1 mt0 mt1
  side_begin "r$r-peer"
  sim0=$(ticks_of "$SIM_PID"); pg0=$(cluster_ticks "$cluster"); read -r m0 mt0 < <(machine_ticks)
  /usr/bin/time -f '%U %S' -o "$out/r$r-peer-time.txt" timeout 600 ${CLIENT[@]+"${CLIENT[@]}"} "$PY" bench/apns_peer.py --conninfo "$DB" \
    --url "$CREMA_APNS_URL" --ca-file "$CREMA_APNS_CA_FILE" --key-file "$CREMA_APNS_KEY_FILE" \
    --key-id "$CREMA_APNS_KEY_ID" --team-id "$CREMA_APNS_TEAM_ID" --topic "$BENCH_BUNDLE_ID" \
    --concurrency "$peer_concurrency" --max-connections "$peer_connections" ${PEER_SINK_ARGS[@]+"${PEER_SINK_ARGS[@]}"} \
    > "$out/r$r-peer.json" 2> "$out/r$r-peer.log" || status=$?
  sim1=$(ticks_of "$SIM_PID"); pg1=$(cluster_ticks "$cluster"); read -r m1 mt1 < <(machine_ticks)
  peer=$(awk '{ printf "%d", ($1 + $2) * 100 }' "$out/r$r-peer-time.txt")
  side_end "r$r-peer"
  echo "crema=0 sim=$((sim1 - sim0)) postgres=$((pg1 - pg0)) peer=$peer busy=$((m1 - m0)) total=$((mt1 - mt0))" > "$out/r$r-peer-cpu.txt"
  [ "$status" = 0 ] || echo "apns_peer.py exited $status (see r$r-peer.log)" | tee -a "$out/run.log" >&2
}

for r in $(seq 1 "$rounds"); do
  log "round $r: fresh database, $n pending alert pushes"
  prepare "$r"
  [ "$quiet_wait" -gt 0 ] && log "machine busy before round $r: $(wait_quiet "$quiet_wait") % of one core's worth (waited up to ${quiet_wait}s)"
  if [ $((r % 2)) = 1 ]; then
    log "round $r: crema dispatch"; side_crema "$r"
    log "round $r: aioapns";        side_peer "$r"
  else
    log "round $r: aioapns";        side_peer "$r"
    log "round $r: crema dispatch"; side_crema "$r"
  fi
  psql "$conninfo" -XAq -c "DROP DATABASE crema_bench_r$r" > /dev/null || true
done

python3 - "$out" "$n" "$rounds" "$mode" <<'EOF' | tee "$out/summary.txt"
import json, os, statistics, sys
out, n, rounds, mode = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
peer_name = "simulator" if mode == "sim" else "sink"
def j(name): return json.load(open(f"{out}/{name}"))
def cpu(name): return {k: float(v) for k, v in (kv.split("=") for kv in open(f"{out}/{name}").read().split())}
rows, valid = [], True
for r in range(1, rounds + 1):
    cs, ps = j(f"r{r}-crema-sim-summary.json"), j(f"r{r}-peer-sim-summary.json")
    sent, total, first_sent, last_sent, max_attempts = open(f"{out}/r{r}-crema-db.txt").read().split()
    try: peer = j(f"r{r}-peer.json")
    except Exception: peer = {"statuses": {}, "errors": {"no output": 1}, "seconds": float("nan")}
    cc, pc = cpu(f"r{r}-crema-cpu.txt"), cpu(f"r{r}-peer-cpu.txt")
    problems = []
    if int(sent) != n or int(total) != n: problems.append(f"crema: {sent} of {total} rows sent")
    # The sink counts answers only; with every row sent (one 200 per row), N answers means one request per token.
    if cs["accepted"] != n or cs["records"] != n or (mode == "sim" and cs["distinct_tokens"] != n):
        problems.append(f"crema: {peer_name} records {cs['records']}, accepted {cs['accepted']}, tokens {cs['distinct_tokens']}")
    if peer["statuses"].get("200") != n or peer["errors"]: problems.append(f"aioapns: {peer['statuses']} {peer['errors']}")
    if ps["accepted"] != n or ps["records"] != n or (mode == "sim" and ps["distinct_tokens"] != n):
        problems.append(f"aioapns: {peer_name} records {ps['records']}, accepted {ps['accepted']}, tokens {ps['distinct_tokens']}")
    if not cc["running"]: problems.append("crema: no 'dispatcher running' line")
    valid &= not problems
    per = lambda ticks: 10 * ticks / n  # ms of CPU per push
    # Share of one core used by anything but crema, the simulator, PostgreSQL and the peer during each side.
    other = lambda c: 100 * (c["busy"] - c["crema"] - c["sim"] - c["postgres"] - c["peer"]) / (c["total"] / os.cpu_count())
    rows.append(dict(
        round=r, sim_ok=cs["resolution"] == "sub-second" and ps["resolution"] == "sub-second",
        crema_sim=cs["per_s"], peer_sim=ps["per_s"],
        # own: crema from its "dispatcher running" line to the last row's sent_at; aioapns from its first request to its last answer
        crema_own=n / (float(last_sent) - cc["running"]) if cc["running"] else float("nan"), peer_own=n / peer["seconds"],
        crema_e2e=n / (float(last_sent) - cc["t0"]), startup=(cc["running"] - cc["t0"]) if cc["running"] else float("nan"),
        crema_conns=cs["connections"], peer_conns=ps["connections"],
        crema_cpu=(per(cc["crema"]), per(cc["sim"]), per(cc["postgres"])), peer_cpu=(per(pc["peer"]), per(pc["sim"]), per(pc["postgres"])),
        max_attempts=max_attempts, problems=problems, other=max(other(cc), other(pc))))
use_sim = all(x["sim_ok"] for x in rows)
metric = "sim" if use_sim else "own"
for x in rows:
    x["crema"], x["peer"] = x[f"crema_{metric}"], x[f"peer_{metric}"]
    x["ratio"] = x["crema"] / x["peer"] if x["crema"] and x["peer"] else float("nan")
if use_sim:
    print(f"N = {n} pushes per side per round; pushes/s = (N - 1) / (last - first accepted request, simulator clock)")
elif mode == "sink":
    counter = {json.load(open(f"{out}/r{r}-{s}-sink-summary.json"))["counter"] for r in range(1, rounds + 1) for s in ("crema", "peer")}
    print(f"N = {n} pushes per side per round, to nghttpd (a sink: answers 200, checks no JWT, keeps no records;"
          f" answers counted by {'/'.join(sorted(counter))}); with no records to time, pushes/s ="
          f" N / (each side's own clock: crema 'dispatcher running' to the last sent_at; aioapns first request to last answer)")
else:
    print(f"N = {n} pushes per side per round; the simulator's receivedAt has whole seconds only, so pushes/s ="
          f" N / (crema: 'dispatcher running' to the last sent_at; aioapns: first request to last answer)")
f = lambda v: "-" if v is None or v != v else f"{v:.0f}"
p = "sim" if mode == "sim" else "sink"
print(f"{'round':>5} {'crema/s':>8} {'aioapns/s':>9} {'ratio':>6} | {'sim c/s':>7} {'sim a/s':>7} | {'own c/s':>7} {'own a/s':>7}"
      f" | {'e2e c/s':>7} {'startup':>7} | conns c/a | CPU ms/push crema: dispatch {p} pg | aioapns: python {p} pg")
for x in rows:
    print(f"{x['round']:>5} {f(x['crema']):>8} {f(x['peer']):>9} {x['ratio']:5.2f}x | {f(x['crema_sim']):>7} {f(x['peer_sim']):>7} |"
          f" {f(x['crema_own']):>7} {f(x['peer_own']):>7} | {f(x['crema_e2e']):>7} {x['startup']:6.2f}s | {x['crema_conns']}/{x['peer_conns']}"
          f"       | {x['crema_cpu'][0]:.3f} {x['crema_cpu'][1]:.3f} {x['crema_cpu'][2]:.3f}"
          f" | {x['peer_cpu'][0]:.3f} {x['peer_cpu'][1]:.3f} {x['peer_cpu'][2]:.3f}"
          + (f"  NOISY: other work used {x['other']:.0f} % of a core" if x["other"] > 15 else "")
          + ("  INVALID: " + "; ".join(x["problems"]) if x["problems"] else ""))
med = statistics.median(x["ratio"] for x in rows)
print(f"median ({metric}): crema {statistics.median(x['crema'] for x in rows):.0f}/s, aioapns {statistics.median(x['peer'] for x in rows):.0f}/s,"
      f" ratio {med:.2f}x (target >= 3x: {'met' if med >= 3 else 'NOT met'})")
for r in range(1, rounds + 1):  # -s: PostgreSQL's statements behind crema, per push
    path = f"{out}/r{r}-crema-statements.tsv"
    if not os.path.exists(path): continue
    lines = [l.rstrip("\n").split("\t") for l in open(path)]
    head, body = lines[0], [dict(zip(lines[0], l)) for l in lines[1:] if len(l) == len(lines[0])]
    total = sum(float(x["exec_us_per_push"]) + float(x["plan_us_per_push"]) for x in body)
    counters = open(f"{out}/r{r}-crema-tables.tsv").read().split("\n\n")[0].splitlines()  # then the sizes
    tables = {l.split("\t")[0]: l.split("\t") for l in counters}
    outbox = tables.get("delivery_outbox", ["", "0", "0", "0"])
    print(f"round {r}, crema side, PostgreSQL per push (pg_stat_statements): {total:.1f} us in statements;"
          f" delivery_outbox rows updated {int(outbox[2]) / n:.2f} per push, HOT {outbox[3]}")
    for x in body[:6]:
        print(f"  {x['exec_us_per_push']:>7} us exec {x['plan_us_per_push']:>6} us plan {x['hit_per_push']:>6} hits"
              f" {x['wal_records_per_push']:>5} WAL records {x['wal_bytes_per_push']:>5} B  ({x['calls']} calls) {x['query'][:70]}")
    if os.path.exists(f"{out}/r{r}-crema-writes.txt"):
        print(f"round {r}, crema side, what PostgreSQL wrote per push (bench/pg_writes.py; index entries = btree leaf"
              f" insertions counted in the side's WAL; the window starts after a CHECKPOINT in odd rounds: full-page images):")
        print(open(f"{out}/r{r}-crema-writes.txt").read(), end="")
        print(f"round {r}, crema side, indexes of the tables written: idx_scan over the side (0: no statement used it), entries per push:")
        print(open(f"{out}/r{r}-crema-indexes.txt").read(), end="")
print("run " + ("valid" if valid else "INVALID"))
with open(os.path.join(os.path.dirname(out), "dispatch-history.tsv"), "a") as h:
    for x in rows:
        h.write("\t".join(map(str, [os.path.basename(out), x["round"], metric if mode == "sim" else "sink-own", f(x["crema"]), f(x["peer"]), f"{x['ratio']:.3f}",
                                     f(x["crema_e2e"]), "valid" if not x["problems"] else "INVALID",
                                     "noisy" if x["other"] > 15 else "quiet"])) + "\n")
sys.exit(0 if valid else 1)
EOF
