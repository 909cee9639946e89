# Shared by the bench/ scripts (ingest.sh, dispatch.sh, dispatch-latency.sh, backlog-drain.sh, ...) and the drills/
# scripts (kill-drill.sh, pg-restart-drill.sh, dispatch-kill-drill.sh, abuse-drill.sh, failover-drill.sh, ...).
#
# Everything here talks to 127.0.0.1 and to a private PostgreSQL cluster on a Unix socket only.

BENCH_POS_KEY=${BENCH_POS_KEY:-bench-pos-key-0123456789}
BENCH_BARISTA_KEY=${BENCH_BARISTA_KEY:-bench-barista-key-012345}
BENCH_API_KEYS="pos:$BENCH_POS_KEY,barista:$BENCH_BARISTA_KEY,dashboard:bench-dashboard-key-0123,app:bench-app-key-0123456789"

# The crema binary: $CREMA_BIN, else the release build.
crema_bin() {
  local bin=${CREMA_BIN:-.build-release/release/crema}
  [ -x "$bin" ] || { echo "no crema binary at $bin (swift build -c release --product crema --scratch-path .build-release, or set CREMA_BIN)" >&2; return 1; }
  echo "$bin"
}

# bench_workspace NAME: a results folder bench/results/NAME-<time>/ (absolute path in $out; git-ignored) and an
# empty folder for a private cluster ($cluster), a `log` function writing to both the terminal and run.log, and an
# exit trap that stops whatever SIM_PID, SERVE_PID and DISPATCH_PID name, then the cluster, and removes it.
bench_workspace() {
  out=bench/results/$1-$(date -u +%Y%m%dT%H%M%SZ)
  mkdir -p "$out"
  out=$(cd "$out" && pwd)
  cluster=$(mktemp -d "/tmp/crema-$1.XXXXXX")
  SIM_PID="" SERVE_PID="" DISPATCH_PID=""
  trap bench_cleanup EXIT
  trap 'exit 130' INT TERM
}
bench_cleanup() {
  [ -n "${DISPATCH_PID:-}" ] && stop_pid "$DISPATCH_PID"
  [ -n "${SERVE_PID:-}" ] && stop_pid "$SERVE_PID"
  [ -n "${SIM_PID:-}" ] && stop_pid "$SIM_PID"
  "$CREMA" postgres stop --dir "$cluster" > /dev/null 2>&1 || true
  rm -rf "$cluster"
}
log() { echo "== $*" | tee -a "$out/run.log"; }

# start_serve CONNINFO PORT POOL LOGFILE: starts `crema serve` in the background; sets SERVE_PID.
# The per-key rate limit (CREMA_RATE_LIMIT, default 200/400 in crema) is off unless the caller sets it: these
# benchmarks and drills send everything with one key per role and measure crema, not the limit. The abuse drill sets
# the default explicitly.
start_serve() {
  CREMA_RATE_LIMIT="${CREMA_RATE_LIMIT:-0}" CREMA_DATABASE_URL="$1" CREMA_API_KEYS="$BENCH_API_KEYS" CREMA_HTTP_HOST=127.0.0.1 CREMA_HTTP_PORT="$2" \
    CREMA_DB_POOL_SIZE="$3" LOG_LEVEL=${CREMA_LOG_LEVEL:-warning} "$CREMA" serve >> "$4" 2>&1 &
  SERVE_PID=$!
}

# wait_ready PORT [SECONDS]: waits (bounded) for /health/ready to answer 200.
wait_ready() {
  local deadline=$((SECONDS + ${2:-30}))
  while [ "$SECONDS" -lt "$deadline" ]; do
    [ "$(curl -s -o /dev/null -m 2 -w '%{http_code}' "http://127.0.0.1:$1/health/ready")" = 200 ] && return 0
    sleep 0.1
  done
  echo "crema did not become ready on port $1 within ${2:-30} s" >&2
  return 1
}

# stop_pid PID [SECONDS]: SIGTERM, then SIGKILL after a bounded wait. Only for processes this script started.
stop_pid() {
  local pid=$1 deadline=$((SECONDS + ${2:-10}))
  kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null || true
  while kill -0 "$pid" 2>/dev/null && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.1; done
  kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

# create_stores PORT N [POS_KEY]: PUT /v1/stores/s1..sN (with the pos key of the tenant they belong to; default
# BENCH_POS_KEY, the default tenant's).
create_stores() {
  local i code
  for i in $(seq 1 "$2"); do
    code=$(curl -s -o /dev/null -m 5 -w '%{http_code}' -X PUT "http://127.0.0.1:$1/v1/stores/s$i" \
      -H "Authorization: Bearer ${3:-$BENCH_POS_KEY}" -H 'Content-Type: application/json' \
      -d "{\"name\":\"Bench store $i\",\"timezone\":\"UTC\"}")
    case "$code" in 200|201) ;; *) echo "PUT /v1/stores/s$i answered $code" >&2; return 1 ;; esac
  done
}

# verify_journal CONNINFO JOURNAL OUTDIR: every journaled 2xx event (order id, version, event type) must be a row
# of order_events. Prints "acknowledged N, found N, missing N"; returns 1 when any is missing.
verify_journal() {
  python3 - "$2" > "$3/journal.csv" <<'PY'
import csv, json, sys
w = csv.writer(sys.stdout)
for line in open(sys.argv[1]):
    e = json.loads(line)
    w.writerow([e["order_id"], e["version"], e["event_type"], e["key"]])
PY
  local result
  result=$(psql "$1" -XqAt -v ON_ERROR_STOP=1 -F ' ' <<SQL
CREATE TEMP TABLE journal (order_id uuid, version int, event_type text, idempotency_key text);
\copy journal FROM '$3/journal.csv' WITH (FORMAT csv)
SELECT count(*), count(e.order_id), count(*) - count(e.order_id)
FROM journal j LEFT JOIN order_events e
  ON e.order_id = j.order_id AND e.version = j.version AND e.event_type = j.event_type;
SQL
)
  set -- $result
  echo "acknowledged $1, found $2, missing $3"
  [ "$3" = 0 ] && [ "$1" -gt 0 ]
}

# bench_require COMMAND:PACKAGE...: installs with apt-get the packages whose command is missing (as root, or with
# sudo), as scripts/lib.sh's ensure_system_packages does; returns 1, naming what is still missing, when that fails.
bench_require() {
  local pair sudo="" pkgs=() still=()
  for pair in "$@"; do command -v "${pair%%:*}" > /dev/null || pkgs+=("${pair#*:}"); done
  [ ${#pkgs[@]} -eq 0 ] && return 0
  echo "installing ${pkgs[*]} with apt" >&2
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  { $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${pkgs[@]}"; } >&2 || true
  for pair in "$@"; do command -v "${pair%%:*}" > /dev/null || still+=("${pair%%:*} (package ${pair#*:})"); done
  [ ${#still[@]} -eq 0 ] && return 0
  echo "still missing after apt-get install: ${still[*]}" >&2
  return 1
}

# ---- delivery benchmarks (bench/dispatch.sh, bench/dispatch-latency.sh, drills/dispatch-kill-drill.sh) ----

BENCH_BUNDLE_ID=${BENCH_BUNDLE_ID:-cafe.crema.bench}
BENCH_APP_KEY=${BENCH_APP_KEY:-bench-app-key-0123456789}

# bench_venv: the virtualenv .crema/venv (shared with scripts/fuzz-api) with the Python peers' packages (aioapns 4.0 and aiohttp
# from PyPI); prints its python.
bench_venv() {
  local venv=.crema/venv
  if ! "$venv/bin/python" -c 'import aioapns, aiohttp' 2> /dev/null; then
    python3 -m venv "$venv" >&2
    "$venv/bin/pip" install -q 'aioapns==4.0' 'aiohttp==3.*' >&2
  fi
  echo "$venv/bin/python"
}

# start_cluster DIR DATABASE LOGFILE: a fresh private cluster (crema postgres start); prints its conninfo.
start_cluster() {
  "$CREMA" postgres start --dir "$1" --database "$2" 2>> "$3" | tail -1
}

# new_database CONNINFO NAME: creates database NAME in the same cluster and prints a conninfo for it
# (libpq takes the last dbname= of a conninfo string).
new_database() {
  psql "$1" -XAq -v ON_ERROR_STOP=1 -c "CREATE DATABASE $2" > /dev/null
  echo "$1 dbname=$2"
}

# start_apns_sim PORT DIR LOGFILE: starts `crema apns-sim` (it generates a signing key in DIR) in the
# background, waits (bounded) for the `export CREMA_APNS_*=…` lines it prints and for GET /sim/health, and exports those
# variables for the crema processes started afterwards. Sets SIM_PID, SIM_URL, SIM_CA.
start_apns_sim() {
  local port=$1 dir=$2 log=$3 deadline=$((SECONDS + 30)) line
  mkdir -p "$dir"
  LOG_LEVEL=${CREMA_LOG_LEVEL:-warning} "$CREMA" apns-sim --host 127.0.0.1 --port "$port" --dir "$dir" \
    --bundle-id "$BENCH_BUNDLE_ID" >> "$log" 2>&1 &
  SIM_PID=$!
  while [ "$SECONDS" -lt "$deadline" ]; do
    kill -0 "$SIM_PID" 2> /dev/null || { echo "crema apns-sim exited; see $log" >&2; cat "$log" >&2; return 1; }
    if grep -Eqs '^(export )?CREMA_APNS_TOPIC=' "$log" && grep -Eqs '^(export )?CREMA_APNS_URL=' "$log"; then break; fi
    sleep 0.1
  done
  # It prints "export CREMA_APNS_…=…" lines (values are paths and a URL without spaces).
  for line in $(sed -nE 's/^(export )?(CREMA_APNS_(URL|CA_FILE|KEY_FILE|KEY_ID|TEAM_ID|TOPIC)=[^ ]*)$/\2/p' "$log"); do
    export "${line?}"
  done
  : "${CREMA_APNS_URL:?crema apns-sim printed no CREMA_APNS_URL; see $log}"
  export CREMA_APNS_TOPIC=${CREMA_APNS_TOPIC:-$BENCH_BUNDLE_ID}
  SIM_URL=$CREMA_APNS_URL SIM_CA=$CREMA_APNS_CA_FILE
  while [ "$SECONDS" -lt "$deadline" ]; do
    sim_curl GET /sim/health > /dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "the simulator did not answer /sim/health within 30 s" >&2
  return 1
}

# sim_curl METHOD PATH [CURL ARGS...]: the simulator's control API (HTTP/2 over TLS, trusting its CA).
sim_curl() {
  local method=$1 path=$2
  shift 2
  curl -sSf -m 60 --cacert "$SIM_CA" -X "$method" "$@" "$SIM_URL$path"
}

# outbox_open CONNINFO: rows still to send (pending or in flight).
outbox_open() {
  psql "$1" -XAt -c "SELECT count(*) FROM delivery_outbox WHERE state IN ('pending', 'inflight')"
}

# wait_drained CONNINFO SECONDS [INTERVAL]: waits (bounded; polls every INTERVAL s, default 0.1) until no row
# is pending or in flight.
wait_drained() {
  local deadline=$((SECONDS + $2))
  while [ "$SECONDS" -lt "$deadline" ]; do
    [ "$(outbox_open "$1")" = 0 ] && return 0
    sleep "${3:-0.1}"
  done
  echo "the outbox did not drain within $2 s ($(outbox_open "$1") rows open)" >&2
  return 1
}

# machine_info: the lines every result folder starts with.
machine_info() {
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "repository HEAD: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD -- Sources Package.swift 2>/dev/null || echo ' (+ uncommitted changes)')"
  echo "crema: $CREMA (sha256 $(sha256sum "$CREMA" | cut -c1-16), built $(date -u -r "$CREMA" +%Y-%m-%dT%H:%M:%SZ))"
  echo "nproc: $(nproc); cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
  echo "memory: $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo)"
  echo "postgres: $(psql --version)"
  echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
}

# ticks_of PID: CPU ticks (1/100 s) of a process: its own user+system time plus that of its reaped children.
ticks_of() { awk '{ print $14 + $15 + $16 + $17 }' "/proc/$1/stat" 2>/dev/null || echo 0; }

# cluster_ticks DIR: CPU ticks of a cluster: the postmaster (and its exited backends) plus every live child.
cluster_ticks() {
  local postmaster total pid
  postmaster=$(head -1 "$1/data/postmaster.pid")
  total=$(ticks_of "$postmaster")
  for pid in $(ps --ppid "$postmaster" -o pid= 2>/dev/null); do total=$((total + $(ticks_of "$pid"))); done
  echo "$total"
}

# machine_ticks: "busy total" ticks over all cores since boot (busy = user + nice + system + irq + softirq + steal).
machine_ticks() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 }' /proc/stat; }

# wait_quiet SECONDS: waits (bounded) until the machine was less than 20 % busy over 2 s; prints that share.
wait_quiet() {
  local deadline=$((SECONDS + $1)) b0 t0 b1 t1 busy
  while :; do
    read -r b0 t0 < <(machine_ticks); sleep 2; read -r b1 t1 < <(machine_ticks)
    busy=$(( 100 * (b1 - b0) * $(nproc) / (t1 - t0 > 0 ? t1 - t0 : 1) ))
    { [ "$busy" -lt 20 ] || [ "$SECONDS" -ge "$deadline" ]; } && break
    sleep 3
  done
  echo "$busy"
}

# ---- what PostgreSQL writes over a window (issue #45; bench/pg_writes.py says where each number comes from) ----
# ingest.sh around each side, dispatch.sh -s around crema's side: pg_writes_begin before the measured window,
# pg_writes_end after it, once the window's backends have exited (so their table counters are flushed).

PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}

# pg_writes_snapshot CONNINFO FILE: one JSON object: the WAL insert position (bytes since 0/0), pg_stat_wal, the
# database's tables (rows inserted, updated, HOT-updated, deleted; heap, TOAST and TOAST index files) and indexes
# (scans, access method, predicate or not, file), and pg_stat_statements' sums over all databases when the module is
# installed in this one.
pg_writes_snapshot() {
  local statements=null
  if [ "$(psql "$1" -XAt -c "SELECT count(*) FROM pg_extension WHERE extname = 'pg_stat_statements'")" = 1 ]; then
    statements=$(psql "$1" -XAt -v ON_ERROR_STOP=1 -c "SELECT json_build_object('calls', sum(calls), 'wal_bytes', sum(wal_bytes),
      'wal_records', sum(wal_records), 'wal_fpi', sum(wal_fpi), 'dirtied', sum(shared_blks_dirtied),
      'written', sum(shared_blks_written), 'hit', sum(shared_blks_hit), 'read', sum(shared_blks_read)) FROM pg_stat_statements")
    statements="\$j\$$statements\$j\$"
  fi
  psql "$1" -XAt -v ON_ERROR_STOP=1 -c "SELECT json_build_object(
      'lsn', pg_current_wal_lsn()::text, 'lsn_bytes', pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0'),
      'db_oid', (SELECT oid::bigint FROM pg_database WHERE datname = current_database()),
      'wal', (SELECT json_build_object('records', wal_records, 'fpi', wal_fpi, 'bytes', wal_bytes) FROM pg_stat_wal),
      'tables', (SELECT json_object_agg(s.relname, json_build_object('ins', s.n_tup_ins, 'upd', s.n_tup_upd,
          'hot', s.n_tup_hot_upd, 'del', s.n_tup_del, 'filenode', pg_relation_filenode(s.relid)::bigint,
          'toast', pg_relation_filenode(nullif(c.reltoastrelid, 0))::bigint,
          'toast_index', (SELECT pg_relation_filenode(x.indexrelid)::bigint FROM pg_index x WHERE x.indrelid = c.reltoastrelid LIMIT 1)))
        FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid),
      'indexes', (SELECT json_object_agg(s.indexrelname, json_build_object('table', s.relname, 'scan', s.idx_scan,
          'partial', x.indpred IS NOT NULL, 'unique', x.indisunique, 'am', a.amname, 'filenode', pg_relation_filenode(s.indexrelid)::bigint,
          'bytes', pg_relation_size(s.indexrelid)))
        FROM pg_stat_user_indexes s JOIN pg_index x ON x.indexrelid = s.indexrelid JOIN pg_class c ON c.oid = s.indexrelid
        JOIN pg_am a ON a.oid = c.relam),
      'statements', $statements::json)" > "$2"
}

# pg_writes_walcount DATADIR FROM_LSN TO_LSN FILE: the WAL between the two positions, read back with pg_waldump and
# summed per database, relation file (that of the record's first block; 0 for a record with none), resource manager and
# record type (a btree split's type carries its level: SPLIT_L0 is a leaf's): "db node rmgr type records bytes", bytes
# being each record's total length with its full-page images. An empty FILE when the WAL is no longer there.
pg_writes_walcount() {
  "$PGBIN/pg_waldump" -p "$1/pg_wal" -s "$2" -e "$3" 2> "$4.err" | awk '
    /^rmgr:/ {
      rmgr = $2
      match($0, /len \(rec\/tot\): *[0-9]+\/ *[0-9]+/); split(substr($0, RSTART, RLENGTH), l, "/"); bytes = l[3] + 0
      match($0, /desc: [A-Z_+0-9]+/); type = substr($0, RSTART + 6, RLENGTH - 6)
      if (type ~ /^SPLIT_/ && match($0, /level [0-9]+/)) type = type substr($0, RSTART + 6, RLENGTH - 6)
      db = 0; node = 0
      if (match($0, /blkref #[0-9]+: rel [0-9]+\/[0-9]+\/[0-9]+/)) {
        split(substr($0, RSTART, RLENGTH), r, "rel "); split(r[2], p, "/"); db = p[2]; node = p[3]
      }
      k = db "\t" node "\t" rmgr "\t" type; n[k]++; b[k] += bytes
    }
    END { for (k in n) print k "\t" n[k] "\t" b[k] }' > "$4" || true
  [ -s "$4" ] || echo "pg_waldump read nothing between $2 and $3: $(head -1 "$4.err")" >&2
}

# pg_writes_begin CONNINFO OUT NAME [WAIT]: NAME-writes-before.json, after WAIT seconds (default 0). A backend reports
# its table counters at the end of a transaction at most once a second (PostgreSQL 15's PGSTAT_MIN_INTERVAL); one that
# then goes idle with counts still pending reports them only 10 s later (PGSTAT_IDLE_INTERVAL). So with connections
# left open across the warm-up (crema serve's), the snapshot waits 10.5 s, else the warm-up's last second lands in
# the window (it did: 5 % more rows by the counters than in the WAL). Backends that have exited have reported.
pg_writes_begin() {
  sleep "${4:-0}"
  pg_writes_snapshot "$1" "$2/$3-writes-before.json"
}
# pg_writes_end CONNINFO DATADIR OUT NAME UNIT EVENTS: NAME-writes-after.json, NAME-walcount.tsv, NAME-writes.json and
# NAME-writes.txt (the lines the summary prints; bench/pg_writes.py).
# The callers let the window's backends exit first (a backend reports its counters as it ends).
pg_writes_end() {
  local conninfo=$1 data=$2 dir=$3 name=$4
  pg_writes_snapshot "$conninfo" "$dir/$name-writes-after.json"
  pg_writes_walcount "$data" "$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["lsn"])' "$dir/$name-writes-before.json")" \
    "$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["lsn"])' "$dir/$name-writes-after.json")" "$dir/$name-walcount.tsv"
  python3 bench/pg_writes.py side "$name" "$5" "$6" "$dir/$name-writes-before.json" "$dir/$name-writes-after.json" \
    "$dir/$name-walcount.tsv" "$dir/$name-writes.json" > "$dir/$name-writes.txt"
}
