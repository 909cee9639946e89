#!/usr/bin/env bash
# Store board fan-out (issue #33): what telling N waiting customers' devices about one store change costs, sent as
# N per-device Live Activity pushes (token fan-out) against one broadcast on the store's channel.
#
# One private PostgreSQL cluster, one `crema apns-sim` and one `crema serve` (release; its dispatcher and broadcaster
# send). For each N (default 100 1000 10000), on a fresh database: store s1 with N waiting orders, each with its
# own Live Activity token, and the store's board on a channel (PUT /v1/stores/s1/broadcast). Then two phases, each
# measured from its start until the simulator has accepted everything it asked for:
#   broadcast: the store's board queued as an order change queues it (due at once), sent by the broadcaster;
#   tokens:    N Live Activity updates, one per token, each carrying exactly the broadcast's body (the same board),
#              inserted as the planner writes outbox rows, sent by the dispatcher.
# Both phases tell the same N devices the same board: the benchmark checks that every token push's `content-state`
# equals the broadcast's, that the simulator accepted N pushes to N distinct tokens and 1 broadcast, and reports
# requests to APNs, wall time, crema's CPU and PostgreSQL's CPU (ms, from /proc) for each side. Idle cost is
# included on both sides (the broadcaster polls every 250 ms; each phase is timed to its last answer).
#
# Usage: bench/fanout.sh [N ...]
# Environment: CREMA_BIN (default .build-release/release/crema), BENCH_PORT (default 18096), BENCH_SIM_PORT (18446).
# Raw outputs: bench/results/fanout-<time>/ (git-ignored). Exits 1 when a run is invalid.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh

sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(100 1000 10000)
port=${BENCH_PORT:-18096}
sim_port=${BENCH_SIM_PORT:-18446}
BENCH_BUNDLE_ID=${BENCH_BUNDLE_ID:-cafe.crema.bench}
CREMA=$(crema_bin)
hz=$(getconf CLK_TCK)

bench_workspace fanout
machine_info | tee "$out/machine.txt"
log "fresh PostgreSQL cluster in $cluster; crema apns-sim on 127.0.0.1:$sim_port"
conninfo=$(start_cluster "$cluster" crema_bench "$out/postgres-start.log")
start_apns_sim "$sim_port" "$out/sim" "$out/sim.log"
export CREMA_APNS_BROADCAST_URL=$SIM_URL CREMA_APNS_CHANNELS_URL=$SIM_URL

api() { curl -sS -m 30 -H "Authorization: Bearer $BENCH_POS_KEY" -H 'Content-Type: application/json' "$@"; }
sim_accepted() { sim_curl GET "/sim/requests$1" | python3 -c 'import json,sys; print(sum(1 for r in json.load(sys.stdin) if r["status"] == 200))'; }
# wait_accepted QUERY COUNT SECONDS: until the simulator accepted COUNT requests matching QUERY (bounded).
wait_accepted() {
  local deadline=$((SECONDS + $3))
  while [ "$SECONDS" -lt "$deadline" ]; do
    [ "$(sim_accepted "$1")" -ge "$2" ] && return 0
    sleep 0.05
  done
  echo "the simulator accepted $(sim_accepted "$1") of $2 within $3 s" >&2
  return 1
}

: > "$out/phases.tsv"
for n in "${sizes[@]}"; do
  log "N=$n: fresh database, store s1 with $n waiting orders and Live Activity tokens"
  DB=$(new_database "$conninfo" "crema_fanout_$n")
  CREMA_DATABASE_URL="$DB" LOG_LEVEL=warning "$CREMA" migrate >> "$out/migrate.log" 2>&1
  psql "$DB" -XAq -v ON_ERROR_STOP=1 -v n="$n" <<'SQL' > /dev/null
INSERT INTO stores (tenant_id, store_id, name, timezone) VALUES ('default', 's1', 'Market St', 'UTC');
INSERT INTO orders (tenant_id, store_id, order_id, number, pos_ref, customer_ref, display_name, locale, items, state, version, eta,
                    placed_at, updated_at, projection)
SELECT 'default', 's1', md5('order' || i)::uuid, i, 'B-' || i, 'c-' || i, 'Ana', 'en', '[{"name":"Latte","quantity":1}]',
       CASE WHEN i % 3 = 0 THEN 'ready' ELSE 'preparing' END, 2, now() + interval '8 minutes', now() - make_interval(secs => :n - i), now(), '{}'
FROM generate_series(1, :n) AS i;
INSERT INTO push_targets (tenant_id, store_id, kind, order_id, token, environment)
SELECT 'default', 's1', 'live_activity', md5('order' || i)::uuid, md5('la' || i) || md5('token' || i), 'production' FROM generate_series(1, :n) AS i;
ANALYZE;
SQL
  start_serve "$DB" "$port" 8 "$out/n$n-serve.log"
  wait_ready "$port" 60
  enabled=$(api -X PUT "http://127.0.0.1:$port/v1/stores/s1/broadcast" -d '{"storage":"none"}')
  channel=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["channel_id"])' "$enabled")
  # The board enabling queued goes out first; the phases start on a quiet server.
  wait_accepted "?channel=$channel" 1 30
  sleep 2
  sim_curl DELETE /sim/requests > /dev/null

  log "N=$n: broadcast phase"
  c0=$(ticks_of "$SERVE_PID"); p0=$(cluster_ticks "$cluster"); t0=$(date +%s.%N)
  psql "$DB" -XAq -v ON_ERROR_STOP=1 -c "INSERT INTO broadcast_outbox (tenant_id, store_id, priority, due_at) VALUES ('default', 's1', 10, now())" > /dev/null
  wait_accepted "?channel=$channel" 1 60
  t1=$(date +%s.%N); c1=$(ticks_of "$SERVE_PID"); p1=$(cluster_ticks "$cluster")
  sim_curl GET "/sim/requests?channel=$channel" > "$out/n$n-broadcast.json"
  printf '%s\tbroadcast\t%s\t%s\t%s\n' "$n" "$(echo "$t1 - $t0" | bc)" "$(( (c1 - c0) * 1000 / hz ))" "$(( (p1 - p0) * 1000 / hz ))" >> "$out/phases.tsv"
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[-1]["body"])' "$out/n$n-broadcast.json" > "$out/n$n-body.json"
  sleep 1
  sim_curl DELETE /sim/requests > /dev/null

  log "N=$n: token phase ($n Live Activity updates)"
  c0=$(ticks_of "$SERVE_PID"); p0=$(cluster_ticks "$cluster"); t0=$(date +%s.%N)
  psql "$DB" -XAq -v ON_ERROR_STOP=1 -v body="$(cat "$out/n$n-body.json")" -v topic="$BENCH_BUNDLE_ID.push-type.liveactivity" \
       -v bundle="$BENCH_BUNDLE_ID" <<'SQL' > /dev/null
INSERT INTO delivery_outbox (tenant_id, store_id, order_id, order_version, order_event, target_kind, target_id, push_type,
                             priority, topic, bundle_id, body, expires_at, reason_code, reason, la_event)
SELECT 'default', 's1', p.order_id, 2, 'ready', 'live_activity', p.target_id, 'liveactivity', 10, :'topic', :'bundle', :'body',
       now() + interval '1 hour', 'activity_update_urgent', 'bench: the board to every waiting device', 'update'
FROM push_targets p WHERE p.tenant_id = 'default' AND p.store_id = 's1';
SQL
  wait_accepted "" "$n" 600
  t1=$(date +%s.%N); c1=$(ticks_of "$SERVE_PID"); p1=$(cluster_ticks "$cluster")
  sim_curl GET /sim/requests > "$out/n$n-tokens.json"
  printf '%s\ttokens\t%s\t%s\t%s\n' "$n" "$(echo "$t1 - $t0" | bc)" "$(( (c1 - c0) * 1000 / hz ))" "$(( (p1 - p0) * 1000 / hz ))" >> "$out/phases.tsv"
  stop_pid "$SERVE_PID"; SERVE_PID=""
done

python3 - "$out" "${sizes[@]}" <<'PY' | tee "$out/summary.txt"
import json, sys
out, sizes = sys.argv[1], [int(x) for x in sys.argv[2:]]
phases = {}
for line in open(f"{out}/phases.tsv"):
    n, side, wall, crema, pg = line.split("\t")
    phases[(int(n), side)] = (float(wall), int(crema), int(pg))
valid = True
print(f"{'N':>6} {'side':>9} {'APNs requests':>14} {'wall':>8} {'crema CPU':>10} {'PostgreSQL CPU':>15}")
for n in sizes:
    broadcast = [r for r in json.load(open(f"{out}/n{n}-broadcast.json")) if r["status"] == 200]
    tokens = [r for r in json.load(open(f"{out}/n{n}-tokens.json")) if r["status"] == 200 and not r.get("channelID")]
    board = json.loads(broadcast[-1]["body"])["aps"]["content-state"]
    same = all(json.loads(r["body"])["aps"]["content-state"] == board for r in tokens)
    problems = []
    if len(broadcast) != 1: problems.append(f"{len(broadcast)} broadcasts accepted")
    if len(tokens) != n or len({r["deviceToken"] for r in tokens}) != n: problems.append(f"{len(tokens)} token pushes accepted")
    if not same: problems.append("a token push carried another board")
    for side, count in (("broadcast", 1), ("tokens", len(tokens))):
        wall, crema, pg = phases[(n, side)]
        print(f"{n:>6} {side:>9} {count:>14} {wall:7.2f}s {crema:8d}ms {pg:13d}ms")
    if problems: print("  INVALID: " + "; ".join(problems))
    valid &= not problems
print("every token push carried the broadcast's board: " + ("yes" if valid else "NO"))
print("run " + ("valid" if valid else "INVALID"))
sys.exit(0 if valid else 1)
PY
