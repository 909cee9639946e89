#!/usr/bin/env bash
# PostgreSQL failover drill (issue #34; docs/reliability.md "Failover"). Builds a pg_auto_failover formation on
# this machine (a monitor and two nodes, synchronous replication; Debian's postgresql-15-auto-failover, installed
# when pg_autoctl is missing), all of it under one temporary folder and run as the `postgres` user. Crema reaches it
# only through the formation's multi-host URI (target_session_attrs=read-write, connect_timeout per host):
# `crema migrate`, then one `crema serve` (its APNs and webhook dispatchers inside, sending to `crema apns-sim` and
# to a webhook receiver on localhost). Then RUNS times on the same formation, while drills/failover_client.py
# replays order lifecycles (push-to-start and Live Activity tokens, so every event plans a push; a webhook per
# change), each command with an Idempotency-Key and retried with the same key when its answer was lost or 5xx:
#   -m perform: `pg_autoctl perform failover` (orchestrated);
#   -m kill:    kill -9 of the primary's keeper processes and postmaster; once the standby is promoted, the
#               killed node's keeper is started again and rejoins as the standby.
# The load goes on until the formation is healthy again (a primary and a secondary) plus AFTER seconds; then the
# dispatchers drain. Crema is never restarted. Per run it reports acknowledged events lost (journal vs
# order_events), planned pushes lost (outbox rows of acknowledged events, neither skipped nor superseded, vs what
# the simulator accepted, by apns-id) and sent twice, webhooks lost (webhook deliveries of the run's orders vs the
# receiver's log), seconds of refusals (first to last write answered 5xx or not at all), how long the dispatcher
# paused and how soon after writes came back it sent again, the longest time from an event's commit (its outbox row's
# created_at, written in the event's transaction) to the simulator accepting its push (the first 200 for its apns-id,
# by the simulator's receivedAt), the commands whose first answer was lost and whose retry with the same key had
# exactly one effect, and whether a crema process died; ending with the line
#   failover: mode=M lost_events=0 lost_pushes=0 duplicate_pushes=N lost_webhooks=0 refused_s=S restarted=no max_push_delay_s=S
# Exits 1 on any loss, a command with other than one effect, or a crema process that died.
#
# Usage: drills/failover-drill.sh [-m perform|kill] [-r RUNS] [-d LOAD_SECONDS] [-k FAIL_AFTER] [-a AFTER] [-t THREADS] [-D]
#   defaults: -m perform -r 1 -d 20 (load at least this long per run) -k 8 -a 3 -t 16.
#   -D: the monitor's and keepers' default timeouts instead of the drill's shorter ones (see FAST_* below and
#       docs/operations.md "Failover timing").
# Environment: CREMA_BIN, BENCH_PORT (default 18096; the receiver is +1), BENCH_SIM_PORT (default 18446).
# Outputs: bench/results/failover-drill-<time>/ (run-N/ per run, summary.txt).
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh

# Shorter detection and promotion than pg_auto_failover's defaults (5 s / 5 s / 2 / 2 s / 20 s / 30 s; keeper 20 s).
# A node is failed after node_considered_unhealthy_timeout without a keeper report and a failed health check; the
# standby is promoted once the old primary confirmed its demotion or primary_demote_timeout passed. A cut-off
# primary demotes itself after network_partition_timeout, which must stay below primary_demote_timeout.
FAST_MONITOR_SETTINGS="pgautofailover.health_check_period=1000 pgautofailover.health_check_timeout=1000
pgautofailover.health_check_max_retries=1 pgautofailover.health_check_retry_delay=500
pgautofailover.node_considered_unhealthy_timeout=3000 pgautofailover.primary_demote_timeout=6000"
FAST_KEEPER_SETTINGS="timeout.network_partition_timeout=4"

mode=perform runs=1 duration=20 fail_after=8 after=3 threads=16 defaults=0
while getopts "m:r:d:k:a:t:D" opt; do
  case "$opt" in
    m) mode=$OPTARG ;;
    r) runs=$OPTARG ;;
    d) duration=$OPTARG ;;
    k) fail_after=$OPTARG ;;
    a) after=$OPTARG ;;
    t) threads=$OPTARG ;;
    D) defaults=1 ;;
    *) sed -n '2,28p' "$0" >&2; exit 2 ;;
  esac
done
case "$mode" in perform|kill) ;; *) echo "-m perform or -m kill" >&2; exit 2 ;; esac
port=${BENCH_PORT:-18096}
receiver_port=$((port + 1))
sim_port=${BENCH_SIM_PORT:-18446}
CREMA=$(crema_bin)

if ! command -v pg_autoctl > /dev/null; then
  echo "pg_autoctl is missing: installing postgresql-15-auto-failover" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql-15-auto-failover > /dev/null
fi

bench_workspace failover-drill
formation=$cluster  # bench_workspace's empty temporary folder; the formation lives in it
chmod 755 "$formation"
[ "$(id -u)" = 0 ] && chown postgres:postgres "$formation"
RECEIVER_PID="" CLIENT_PID="" PROBE_PID=""
declare -A KEEPER_PID=()
cleanup() {
  [ -n "$CLIENT_PID" ] && stop_pid "$CLIENT_PID" 5
  [ -n "$PROBE_PID" ] && stop_pid "$PROBE_PID" 5
  [ -n "$RECEIVER_PID" ] && stop_pid "$RECEIVER_PID" 5
  [ -n "${SERVE_PID:-}" ] && stop_pid "$SERVE_PID"
  [ -n "${SIM_PID:-}" ] && stop_pid "$SIM_PID"
  SERVE_PID="" SIM_PID=""
  for node in node1 node2 monitor; do
    [ -d "$formation/$node" ] && autoctl stop --pgdata "$formation/$node" --immediate > /dev/null 2>&1 || true
  done
  for pid in "${KEEPER_PID[@]}"; do stop_pid "$pid" 10; done
  # Whatever of the formation outlived its keepers (processes whose command line names this drill's own folder).
  for pid in $(ps -eo pid=,args= | awk -v dir="$formation/" 'index($0, dir) { print $1 }'); do kill -KILL "$pid" 2> /dev/null || true; done
  bench_cleanup
}
trap cleanup EXIT

# autoctl ARGS: pg_autoctl as the postgres user, its configuration and state inside the formation's folder.
autoctl() {
  local env=(env "PATH=/usr/lib/postgresql/15/bin:/usr/local/bin:/usr/bin:/bin" "XDG_CONFIG_HOME=$formation/config"
    "XDG_DATA_HOME=$formation/share" "XDG_RUNTIME_DIR=$formation/run")
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "${env[@]}" pg_autoctl "$@"; else "${env[@]}" pg_autoctl "$@"; fi
}
monitor_sql() { psql "postgres://autoctl_node@127.0.0.1:$monitor_port/pg_auto_failover?sslmode=disable" -XAtq -F ' ' -c "$1"; }
nodes_state() { monitor_sql "SELECT string_agg(nodename || '=' || reportedstate || '/' || goalstate, ' ' ORDER BY nodeid) FROM pgautofailover.node"; }
primary_node() { monitor_sql "SELECT nodename FROM pgautofailover.node WHERE reportedstate IN ('primary', 'wait_primary', 'single') AND goalstate = reportedstate"; }
primary_is() { [ "$(primary_node)" = "$1" ]; }
primary_is_not() { local p; p=$(primary_node) && [ -n "$p" ] && [ "$p" != "$1" ]; }
healthy() { [ "$(monitor_sql "SELECT count(*) FILTER (WHERE reportedstate = goalstate AND reportedstate IN ('primary', 'secondary')) || ' ' || count(*) FROM pgautofailover.node")" = "2 2" ]; }
# wait_for SECONDS CONDITION...: polls CONDITION every 0.1 s (bounded).
wait_for() {
  local deadline=$((SECONDS + $1)); shift
  until "$@" 2> /dev/null; do
    [ "$SECONDS" -lt "$deadline" ] || return 1
    sleep 0.1
  done
}
now() { date +%s.%N; }
# wait_healthy SECONDS: waits (bounded) for a primary and a secondary. A standby's base backup (node2 joining, or a
# killed primary whose pg_rewind failed) waits for a checkpoint, spread over minutes by default: ask for one.
wait_healthy() {
  local deadline=$((SECONDS + $1)) primary
  until healthy 2> /dev/null; do
    [ "$SECONDS" -lt "$deadline" ] || return 1
    primary=$(primary_node 2> /dev/null | head -1) || true
    [ -n "$primary" ] && psql "host=127.0.0.1 port=${node_port[$primary]} user=postgres dbname=crema" -XAtq -c CHECKPOINT > /dev/null 2>&1 || true
    sleep 1
  done
}
# descendants PID: every process below PID.
descendants() {
  local child
  for child in $(pgrep -P "$1"); do echo "$child"; descendants "$child"; done
}
# run_keeper NODE: `pg_autoctl run` of a node already created; sets KEEPER_PID[NODE].
run_keeper() {
  autoctl run --pgdata "$formation/$1" >> "$out/$1.log" 2>&1 &
  KEEPER_PID[$1]=$!
}
read -r monitor_port node1_port node2_port < <(python3 -c '
import socket
socks = [socket.socket() for _ in range(3)]
for s in socks: s.bind(("127.0.0.1", 0))
print(*(s.getsockname()[1] for s in socks))')
declare -A node_port=([node1]=$node1_port [node2]=$node2_port)

{ machine_info; echo "pg_autoctl: $(pg_autoctl --version | head -1)"; echo "mode: $mode, runs: $runs, threads: $threads, load >= ${duration}s, fail after ${fail_after}s"
  if [ "$defaults" = 1 ]; then echo "timeouts: pg_auto_failover defaults"; else echo "timeouts: $(echo $FAST_MONITOR_SETTINGS $FAST_KEEPER_SETTINGS)"; fi
} | tee "$out/machine.txt"

log "formation in $formation: monitor :$monitor_port, node1 :$node1_port, node2 :$node2_port"
autoctl create monitor --pgdata "$formation/monitor" --pgport "$monitor_port" --hostname 127.0.0.1 --auth trust --no-ssl \
  --run >> "$out/monitor.log" 2>&1 &
KEEPER_PID[monitor]=$!
wait_for 60 monitor_sql "SELECT 1" > /dev/null || { echo "the monitor did not start; see monitor.log" >&2; exit 1; }
if [ "$defaults" = 0 ]; then
  for setting in $FAST_MONITOR_SETTINGS; do
    psql "host=127.0.0.1 port=$monitor_port user=postgres dbname=pg_auto_failover" -XAtq -c "ALTER SYSTEM SET ${setting%%=*} = '${setting#*=}'"
  done
  psql "host=127.0.0.1 port=$monitor_port user=postgres dbname=pg_auto_failover" -XAtq -c "SELECT pg_reload_conf()" > /dev/null
fi
monitor_uri="postgres://autoctl_node@127.0.0.1:$monitor_port/pg_auto_failover?sslmode=disable"
for node in node1 node2; do
  autoctl create postgres --pgdata "$formation/$node" --pgport "${node_port[$node]}" --hostname 127.0.0.1 --name "$node" \
    --auth trust --no-ssl --monitor "$monitor_uri" --dbname crema --run >> "$out/$node.log" 2>&1 &
  KEEPER_PID[$node]=$!
  if [ "$node" = node1 ]; then
    wait_for 90 primary_is node1 || { echo "node1 did not become primary; see node1.log" >&2; exit 1; }
  fi
done
wait_healthy 180 || { echo "the formation did not become healthy: $(nodes_state)" >&2; exit 1; }
if [ "$defaults" = 0 ]; then
  for node in node1 node2; do
    for setting in $FAST_KEEPER_SETTINGS; do autoctl config set --pgdata "$formation/$node" "${setting%%=*}" "${setting#*=}" > /dev/null; done
    autoctl reload --pgdata "$formation/$node" > /dev/null
  done
fi
log "formation: $(nodes_state)"
autoctl show uri --pgdata "$formation/monitor" --formation default >> "$out/run.log"

conninfo="postgres://postgres@127.0.0.1:$node1_port,127.0.0.1:$node2_port/crema?target_session_attrs=read-write&connect_timeout=2"
log "crema's database URL: $conninfo"
CREMA_DATABASE_URL="$conninfo" LOG_LEVEL=warning "$CREMA" migrate > "$out/migrate.log" 2>&1
start_apns_sim "$sim_port" "$out/sim" "$out/sim.log"
: > "$out/received.jsonl"
python3 drills/abuse_drill.py receiver --listen "$receiver_port" --out "$out/received.jsonl" --duration 86400 \
  2>> "$out/receiver.log" &
RECEIVER_PID=$!
master_key=$(python3 -c 'import base64, os; print(base64.b64encode(os.urandom(32)).decode())')
# info: the LISTEN connection's "lost" and "listening again" lines are the listener's own failover timeline.
CREMA_MASTER_KEY=$master_key CREMA_WEBHOOK_ALLOW_PRIVATE=1 CREMA_LOG_LEVEL=info start_serve "$conninfo" "$port" 16 "$out/serve.log"
wait_ready "$port" 60
create_stores "$port" 8
serve_pid=$SERVE_PID sim_pid=$SIM_PID
hook=$(python3 drills/failover_client.py setup --port "$port" --pos-key "$BENCH_POS_KEY" --app-key "$BENCH_APP_KEY" \
  --receiver-port "$receiver_port" --run-id "$(basename "$out")")
log "crema serve pid $serve_pid on :$port, apns-sim pid $sim_pid on :$sim_port, webhook $hook to :$receiver_port"

q() { psql "$conninfo" -XAtq -F ' ' -v ON_ERROR_STOP=1 -c "$1"; }
open_work() { q "SELECT (SELECT count(*) FROM delivery_outbox WHERE state IN ('pending', 'inflight')) + (SELECT count(*) FROM webhook_deliveries WHERE state IN ('pending', 'inflight'))"; }
drained() { [ "$(open_work)" = 0 ]; }

failures=0
: > "$out/results.jsonl"
for run in $(seq 1 "$runs"); do
  rdir=$out/run-$run
  mkdir -p "$rdir"
  run_id=fo$run-$(date -u +%H%M%S)
  sim_curl DELETE /sim/requests > /dev/null
  serve_lines=$(wc -l < "$out/serve.log")
  before=$(primary_node)
  log "run $run/$runs ($mode): primary $before; $threads workers"
  t_start=$(now)
  timeout $((duration + 600)) python3 drills/failover_client.py load --port "$port" --pos-key "$BENCH_POS_KEY" \
    --barista-key "$BENCH_BARISTA_KEY" --app-key "$BENCH_APP_KEY" --journal "$rdir/journal.jsonl" \
    --outcomes "$rdir/outcomes.jsonl" --retried "$rdir/retried.jsonl" --stop-file "$rdir/stop" --threads "$threads" \
    --duration $((duration + 540)) --run-id "$run_id" > "$rdir/client.txt" 2>&1 &
  CLIENT_PID=$!
  python3 drills/failover_client.py probe --conninfo "$conninfo" --outcomes "$rdir/probe.jsonl" --stop-file "$rdir/stop" &
  PROBE_PID=$!
  sleep "$fail_after"
  t_fail=$(now)
  if [ "$mode" = perform ]; then
    # It returns once the whole formation settled; the promotion is timed by the monitor's states meanwhile.
    autoctl perform failover --pgdata "$formation/monitor" >> "$rdir/perform.log" 2>&1 &
    perform_pid=$!
  else
    keeper=${KEEPER_PID[$before]}
    # The keeper is every pg_autoctl process under it (supervisor, postgres controller, node-active service).
    victims="$(descendants "$keeper" | while read -r pid; do [ "$(cat "/proc/$pid/comm" 2> /dev/null)" = pg_autoctl ] && echo "$pid"; done) $(head -1 "$formation/$before/postmaster.pid")"
    kill -KILL $victims
    wait "$keeper" 2> /dev/null || true
    log "kill -9 of $before's keeper and postmaster (pids $(echo $victims))"
  fi
  wait_for 300 primary_is_not "$before" || log "no new primary within 300 s: $(nodes_state)"
  t_promoted=$(now)
  if [ "$mode" = perform ]; then
    wait "$perform_pid" || log "pg_autoctl perform failover failed; see run-$run/perform.log"
    log "pg_autoctl perform failover returned $(python3 -c "print(f'{$(now) - $t_fail:.2f}')") s after it began"
  fi
  after_state=$(primary_node)
  log "new primary $after_state after $(python3 -c "print(f'{$t_promoted - $t_fail:.2f}')") s: $(nodes_state)"
  [ "$mode" = kill ] && run_keeper "$before"
  wait_healthy 300 || log "the formation was not healthy within 300 s: $(nodes_state)"
  t_healthy=$(now)
  log "formation healthy again $(python3 -c "print(f'{$t_healthy - $t_fail:.2f}')") s after the failover: $(nodes_state)"
  sleep "$after"
  remaining=$(python3 -c "print(max(0, $duration - ($(now) - $t_start)))")
  sleep "$remaining"
  touch "$rdir/stop"
  wait "$CLIENT_PID" || log "the load client failed: $(cat "$rdir/client.txt")"
  CLIENT_PID=""
  wait "$PROBE_PID" || true
  PROBE_PID=""
  t_load_end=$(now)
  log "at the end of the load: outbox $(q "SELECT string_agg(state || '=' || n, ' ') FROM (SELECT state, count(*) n FROM delivery_outbox GROUP BY 1) s"), webhooks $(q "SELECT string_agg(state || '=' || n, ' ') FROM (SELECT state, count(*) n FROM webhook_deliveries GROUP BY 1) s")"
  wait_for 300 drained || log "not drained within 300 s: $(open_work) open"
  t_drained=$(now)
  sleep 0.5  # the receiver and the simulator finish writing down what is on the wire
  sim_curl GET /sim/requests > "$rdir/sim-requests.json"
  log "client: $(cat "$rdir/client.txt")"

  acked=$(verify_journal "$conninfo" "$rdir/journal.jsonl" "$rdir") || true
  log "journal: $acked"
  python3 -c '
import csv, json, sys
w = csv.writer(sys.stdout)
for line in open(sys.argv[1]):
    r = json.loads(line)
    w.writerow([r["order_id"], r["event_type"], r["key"], r["first"], r["replayed"]])' "$rdir/retried.jsonl" > "$rdir/retried.csv"
  psql "$conninfo" -XAtq -v ON_ERROR_STOP=1 > "$rdir/db.json" <<SQL
CREATE TEMP TABLE journal (order_id uuid, version int, event_type text, idempotency_key text);
\copy journal FROM '$rdir/journal.csv' WITH (FORMAT csv)
CREATE TEMP TABLE retried (order_id uuid, event_type text, idempotency_key text, first text, replayed bool);
\copy retried FROM '$rdir/retried.csv' WITH (FORMAT csv)
SELECT json_build_object(
  'pushes', (SELECT coalesce(json_agg(json_build_object('apns_id', lower(d.apns_id::text), 'state', d.state,
                                                        'created_at', extract(epoch FROM d.created_at))), '[]')
             FROM delivery_outbox d JOIN journal j ON j.order_id = d.order_id AND j.version = d.order_version
             WHERE d.state NOT IN ('skipped', 'superseded')),
  'superseded', (SELECT count(*) FROM delivery_outbox d JOIN journal j ON j.order_id = d.order_id AND j.version = d.order_version
                 WHERE d.state = 'superseded'),
  'sent_at', (SELECT coalesce(json_agg(extract(epoch FROM sent_at) ORDER BY sent_at), '[]') FROM delivery_outbox
              WHERE sent_at >= to_timestamp($t_start)),
  'webhooks', (SELECT coalesce(json_agg(json_build_object('order_id', e.order_id, 'version', (e.body -> 'data' -> 'order' ->> 'version')::int,
                      'state', w.state)), '[]')
               FROM webhook_deliveries w JOIN webhook_events e ON e.tenant_id = w.tenant_id AND e.event_id = w.event_id
               WHERE e.order_id IN (SELECT order_id FROM journal)),
  'retried', (SELECT count(*) FROM retried),
  'retried_one_effect', (SELECT count(*) FROM retried r
                         WHERE (SELECT count(*) FROM order_events e WHERE e.order_id = r.order_id AND e.event_type = r.event_type) = 1),
  'duplicate_orders', (SELECT count(*) FROM (SELECT 1 FROM orders WHERE pos_ref LIKE '$run_id-%' GROUP BY store_id, pos_ref HAVING count(*) > 1) d)
);
SQL
  restarted=no
  for pid in "$serve_pid" "$sim_pid"; do kill -0 "$pid" 2> /dev/null || restarted=yes; done
  { tail -n +"$((serve_lines + 1))" "$out/serve.log" | grep -E 'LISTEN connection|listening again' || true; } > "$rdir/listener.log"
  python3 - "$rdir" "$mode" "$restarted" "$t_start" "$t_fail" "$t_promoted" "$t_healthy" "$t_load_end" "$t_drained" \
    "$before" "$after_state" <<'EOF' | tee -a "$out/run.log"
import json, sys
from datetime import datetime
rdir, mode, restarted = sys.argv[1:4]
t_start, t_fail, t_promoted, t_healthy, t_load_end, t_drained = map(float, sys.argv[4:10])
before, after = sys.argv[10:12]
outcomes = sorted((json.loads(l) for l in open(f"{rdir}/outcomes.jsonl")), key=lambda o: o["t"])
db = json.load(open(f"{rdir}/db.json"))
journal = [json.loads(l) for l in open(f"{rdir}/journal.jsonl")]
acked = {(j["order_id"], j["version"], j["event_type"]) for j in journal}
refused = [o for o in outcomes if o["status"] == 0 or o["status"] >= 500]
refused_s = (max(o["t"] + o["latency_ms"] / 1000 for o in refused) - refused[0]["t"]) if refused else 0.0
ok_after = next((o for o in outcomes if refused and o["t"] > refused[-1]["t"] and 200 <= o["status"] < 300), None)
writes_back = ok_after["t"] + ok_after["latency_ms"] / 1000 if ok_after else None
# The formation alone: the first write a direct psql probe got through after its first refusal since the failover.
probes = [json.loads(l) for l in open(f"{rdir}/probe.jsonl")]
first_bad = next((p for p in probes if p["t"] >= t_fail and not p["ok"]), None)
formation_back = next((p["done"] for p in probes if first_bad and p["t"] > first_bad["t"] and p["ok"]), None)
probe_refused = sum(1 for p in probes if p["t"] >= t_fail and not p["ok"])
by_kind = {}
for o in refused:
    k = o["error"] or str(o["status"])
    by_kind[k] = by_kind.get(k, 0) + 1
# Pushes: accepted simulator records by apns-id.
records = json.load(open(f"{rdir}/sim-requests.json"))
accepted = {}
first_accepted = {}
for r in records:
    if r["status"] == 200:
        apns_id = r["apnsID"].lower()
        accepted[apns_id] = accepted.get(apns_id, 0) + 1
        at = datetime.fromisoformat(r["receivedAt"].replace("Z", "+00:00")).timestamp()
        first_accepted[apns_id] = min(at, first_accepted.get(apns_id, at))
planned = db["pushes"]
# From the event's commit (its outbox row was written in the event's transaction) to APNs' first acceptance.
delays = [first_accepted[p["apns_id"]] - float(p["created_at"]) for p in planned if p["apns_id"] in first_accepted]
max_push_delay_s = max(delays, default=0.0)
lost_pushes = [p for p in planned if p["apns_id"] not in accepted]
duplicates = sum(accepted.get(p["apns_id"], 0) - 1 for p in planned if accepted.get(p["apns_id"], 0) > 1)
# Webhooks: every delivery of the run's orders must have reached the receiver (order id and version).
received = set()
for line in open(f"{rdir}/../received.jsonl"):
    r = json.loads(line)
    if "order_id" in r:
        received.add((r["order_id"], r["version"]))
lost_webhooks = [w for w in db["webhooks"] if (w["order_id"], w["version"]) not in received]
# The dispatcher: its longest pause in sent_at around the failover, and its first send after writes came back.
# Only pauses that began before writes came back: after the load, rows whose outcome was lost wait for their lease.
sent = [t for t in db["sent_at"] if t >= t_fail - 5]
gaps = [(b - a, a, b) for a, b in zip(sent, sent[1:]) if writes_back is None or a <= writes_back]
gap = max(gaps, default=(0.0, t_fail, t_fail))
first_send = next((t for t in sent if writes_back and t >= writes_back), None)
result = {
    "mode": mode, "primary_before": before, "primary_after": after, "acknowledged": len(journal),
    "requests": len(outcomes), "refused": len(refused), "refused_by": by_kind, "refused_s": round(refused_s, 2),
    "promoted_s": round(t_promoted - t_fail, 2), "healthy_s": round(t_healthy - t_fail, 2),
    "writes_back_s": round(writes_back - t_fail, 2) if writes_back else None,
    "formation_back_s": round(formation_back - t_fail, 2) if formation_back else None,
    "crema_lag_s": round(writes_back - formation_back, 2) if formation_back and writes_back else None,
    "probe_refused": probe_refused,
    "planned_pushes": len(planned), "superseded": db["superseded"], "lost_pushes": len(lost_pushes),
    "lost_push_states": sorted({p["state"] for p in lost_pushes}), "duplicate_pushes": duplicates,
    "webhooks": len(db["webhooks"]), "lost_webhooks": len(lost_webhooks),
    "dispatch_gap_s": round(gap[0], 2), "dispatch_gap_from_failover_s": [round(gap[1] - t_fail, 2), round(gap[2] - t_fail, 2)],
    "dispatch_after_writes_s": round(first_send - writes_back, 2) if first_send and writes_back else None,
    "retried": db["retried"], "retried_one_effect": db["retried_one_effect"], "duplicate_orders": db["duplicate_orders"],
    "drain_s": round(t_drained - t_load_end, 2), "restarted": restarted, "max_push_delay_s": round(max_push_delay_s, 2),
}
json.dump(result, open(f"{rdir}/result.json", "w"))
print(json.dumps(result))
EOF
  lost_events=$(python3 -c "import sys; print(sys.argv[1].split()[-1])" "$acked")
  python3 - "$rdir/result.json" "$lost_events" "$out/results.jsonl" <<'EOF' | tee -a "$out/run.log"
import json, sys
r = json.load(open(sys.argv[1]))
r["lost_events"] = int(sys.argv[2]) if sys.argv[2].isdigit() else -1
open(sys.argv[3], "a").write(json.dumps(r) + "\n")
print(f"commands whose first attempt got no answer or a 5xx, acknowledged in the end: {r['retried']}, with exactly one effect: "
      f"{r['retried_one_effect']}; duplicate orders: {r['duplicate_orders']}")
print(f"refusals: {r['refused']} answers {r['refused_by']} over {r['refused_s']} s; new primary {r['promoted_s']} s, "
      f"writes back {r['writes_back_s']} s (a direct psql probe: {r['formation_back_s']} s, so Crema's own part {r['crema_lag_s']} s), formation healthy {r['healthy_s']} s after the failover began")
print(f"dispatcher: longest pause {r['dispatch_gap_s']} s, first send {r['dispatch_after_writes_s']} s after writes came back; "
      f"pushes planned {r['planned_pushes']} (superseded {r['superseded']}), webhooks {r['webhooks']}; drained {r['drain_s']} s after the load")
print(f"failover: mode={r['mode']} lost_events={r['lost_events']} lost_pushes={r['lost_pushes']} duplicate_pushes={r['duplicate_pushes']} "
      f"lost_webhooks={r['lost_webhooks']} refused_s={r['refused_s']} restarted={r['restarted']} max_push_delay_s={r['max_push_delay_s']}")
bad = (r["lost_events"] != 0 or r["lost_pushes"] or r["lost_webhooks"] or r["restarted"] != "no"
       or r["retried_one_effect"] != r["retried"] or r["duplicate_orders"])
sys.exit(1 if bad else 0)
EOF
  [ "${PIPESTATUS[0]}" = 0 ] || failures=$((failures + 1))
  log "LISTEN connection: $(grep -c 'lost the LISTEN' "$rdir/listener.log") lost, back after: $(grep -o 'outage_ms[^,}]*' "$rdir/listener.log" | tr '\n' ' ')"
done

python3 - "$out/results.jsonl" <<'EOF' | tee "$out/summary.txt"
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
cols = ["refused_s", "promoted_s", "formation_back_s", "writes_back_s", "crema_lag_s", "healthy_s", "dispatch_gap_s", "dispatch_after_writes_s",
        "max_push_delay_s", "acknowledged", "retried", "planned_pushes", "duplicate_pushes", "webhooks"]
print("| run | " + " | ".join(cols) + " | lost events/pushes/webhooks | restarted |")
print("|---" * (len(cols) + 3) + "|")
for i, r in enumerate(rows, 1):
    print(f"| {i} | " + " | ".join(str(r[c]) for c in cols) + f" | {r['lost_events']}/{r['lost_pushes']}/{r['lost_webhooks']} | {r['restarted']} |")
for name, f in (("min", min), ("median", statistics.median), ("max", max)):
    vals = []
    for c in cols:
        xs = [r[c] for r in rows if r[c] is not None]
        vals.append(f"{f(xs):g}" if xs else "-")
    print(f"| {name} | " + " | ".join(vals) + " | | |")
EOF
log "runs with a violation: $failures of $runs"
exit $((failures > 0))
