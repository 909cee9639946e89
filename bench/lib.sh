# Shared by bench/ingest.sh and bench/kill-drill.sh (source it; it expects `set -euo pipefail`).
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

# start_serve CONNINFO PORT POOL LOGFILE: starts `crema serve` in the background; sets SERVE_PID.
start_serve() {
  CREMA_DATABASE_URL="$1" CREMA_API_KEYS="$BENCH_API_KEYS" CREMA_HTTP_HOST=127.0.0.1 CREMA_HTTP_PORT="$2" \
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

# create_stores PORT N: PUT /v1/stores/s1..sN.
create_stores() {
  local i code
  for i in $(seq 1 "$2"); do
    code=$(curl -s -o /dev/null -m 5 -w '%{http_code}' -X PUT "http://127.0.0.1:$1/v1/stores/s$i" \
      -H "Authorization: Bearer $BENCH_POS_KEY" -H 'Content-Type: application/json' \
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
