#!/usr/bin/env bash
# Failover drill on a Citus formation (issue #44; docs/reliability.md "Failover", docs/scaling.md "On a running
# cluster"): the failover drill's idea carried over to a worker's primary. Builds a pg_auto_failover Citus formation on
# this machine (`pg_autoctl create monitor`, `create coordinator`, and `create worker --group 1|2` twice each: two
# worker groups of a primary and a synchronous standby; pg_autoctl preloads Citus and registers the coordinator and the
# workers' primaries in the coordinator's pg_dist_node), all of it under one temporary folder and run as the `postgres`
# user. Crema connects to the coordinator only: `crema migrate` distributes the schema by tenant_id, then one
# `crema serve` (its dispatchers inside, sending to `crema apns-sim` and to a webhook receiver on localhost) serves two
# tenants, the default one and a second one named so that its shards are on the other worker group. Then RUNS times,
# while drills/failover_client.py replays order lifecycles for both tenants (tokens, so every event plans a push; a
# webhook per change; every command with an Idempotency-Key, retried with the same key when its answer was lost or 5xx),
# one worker group's primary fails:
#   -m perform: `pg_autoctl perform failover --group G` (orchestrated);
#   -m kill:    kill -9 of the group primary's keeper processes and postmaster; once the standby is promoted, the
#               killed node's keeper is started again and rejoins as the standby.
# The promoted standby's own keeper points the coordinator's pg_dist_node at it (pg_autoctl's master_update_node,
# prepared before the promotion and committed after). The load goes on until every node is settled
# again and the coordinator's metadata is synced to the workers, plus AFTER seconds; then the dispatchers drain. Crema
# is never restarted. It reports what drills/failover-drill.sh does (drills/failover_report.py: acknowledged events,
# planned pushes and webhooks lost, seconds of refusals, the dispatcher's pause, retried commands with one effect), each
# tenant's refusals apart, and how long the workers' metadata stayed out of sync; ending with the line
#   citus-failover: mode=M group=G metadata_synced_s=S lost_events=0 lost_pushes=0 duplicate_pushes=N lost_webhooks=0 refused_s=S restarted=no max_push_delay_s=S
# The psql write probe inserts a row, through the coordinator, into a table of its own (drill_probe.t), on a shard of
# the failing group: when that group took writes again, apart from Crema. Each node's PostgreSQL log is kept
# (NODE-postgres.log; the coordinator logs a failed statement's parameters, so its tenant). Exits 1 on any loss, a
# command with other than one effect, or a crema process that died; exits 2 when Citus is not installed (nothing of
# Citus is in this repository).
#
# Usage: drills/citus-failover-drill.sh [-m perform|kill] [-g GROUP] [-r RUNS] [-d LOAD_SECONDS] [-k FAIL_AFTER] [-a AFTER] [-t THREADS] [-D]
#                                       [-R INTERVAL]
#   defaults: -m perform, -g the group holding the default tenant's shards, -r 1 -d 20 -k 8 -a 3 -t 16 (split
#   between the two tenants). -D: pg_auto_failover's default timeouts instead of the drill's shorter ones
#   (drills/failover_lib.sh). -R: citus.recover_2pc_interval on the coordinator (e.g. 5s; Citus's default is 1min):
#   how soon a transaction a kill left prepared on the failed group is finished and lets go of its locks.
# Environment: CREMA_BIN, BENCH_PORT (default 18296; the receiver is +1), BENCH_SIM_PORT (default 18298).
# Outputs: bench/results/citus-failover-drill-<time>/ (run-N/ per run, summary.txt).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh   # require_citus
source bench/lib.sh
source drills/failover_lib.sh

mode=perform group="" runs=1 duration=20 fail_after=8 after=3 threads=16 defaults=0 recover=""
while getopts "m:g:r:d:k:a:t:DR:" opt; do
  case "$opt" in
    m) mode=$OPTARG ;;
    g) group=$OPTARG ;;
    r) runs=$OPTARG ;;
    d) duration=$OPTARG ;;
    k) fail_after=$OPTARG ;;
    a) after=$OPTARG ;;
    t) threads=$OPTARG ;;
    D) defaults=1 ;;
    R) recover=$OPTARG ;;
    *) sed -n '2,37p' "$0" >&2; exit 2 ;;
  esac
done
case "$mode" in perform|kill) ;; *) echo "-m perform or -m kill" >&2; exit 2 ;; esac
require_citus drills/citus-failover-drill.sh
port=${BENCH_PORT:-18296}
receiver_port=$((port + 1))
sim_port=${BENCH_SIM_PORT:-18298}
CREMA=$(crema_bin)
ensure_pg_autoctl

bench_workspace citus-failover-drill
formation_folder
nodes=(coord w1a w2a w1b w2b)
formation_nodes=${#nodes[@]}
declare -A node_group=([coord]=0 [w1a]=1 [w1b]=1 [w2a]=2 [w2b]=2)
RECEIVER_PID="" CLIENT_A="" CLIENT_B="" PROBE_PID=""
cleanup() {
  local pid
  for pid in "$CLIENT_A" "$CLIENT_B" "$PROBE_PID" "$RECEIVER_PID"; do [ -n "$pid" ] && stop_pid "$pid" 5; done
  [ -n "${SERVE_PID:-}" ] && stop_pid "$SERVE_PID"
  [ -n "${SIM_PID:-}" ] && stop_pid "$SIM_PID"
  SERVE_PID="" SIM_PID=""
  # Each node's PostgreSQL log (the coordinator's says what Citus answered Crema while a worker was gone).
  for node in "${nodes[@]}"; do cat "$formation/$node"/log/*.log > "$out/$node-postgres.log" 2> /dev/null || true; done
  stop_formation "${nodes[@]}"
  bench_cleanup
}
trap cleanup EXIT

read -r monitor_port coord_port w1a_port w2a_port w1b_port w2b_port < <(free_ports 6)
declare -A node_port=([coord]=$coord_port [w1a]=$w1a_port [w2a]=$w2a_port [w1b]=$w1b_port [w2b]=$w2b_port)

{ machine_info; echo "pg_autoctl: $(pg_autoctl --version | head -1)"; echo "citus: $(grep default_version "$(pg_config --sharedir)/extension/citus.control")"
  echo "mode: $mode, runs: $runs, threads: $threads (two tenants), load >= ${duration}s, fail after ${fail_after}s"
  if [ "$defaults" = 1 ]; then echo "timeouts: pg_auto_failover defaults"; else echo "timeouts: $(echo $FAST_MONITOR_SETTINGS $FAST_KEEPER_SETTINGS)"; fi
} | tee "$out/machine.txt"

log "formation in $formation: monitor :$monitor_port, coordinator :$coord_port, group 1 :$w1a_port :$w1b_port, group 2 :$w2a_port :$w2b_port"
autoctl create monitor --pgdata "$formation/monitor" --pgport "$monitor_port" --hostname 127.0.0.1 --auth trust --no-ssl \
  --run >> "$out/monitor.log" 2>&1 &
KEEPER_PID[monitor]=$!
wait_for 60 monitor_sql "SELECT 1" > /dev/null || { echo "the monitor did not start; see monitor.log" >&2; exit 1; }
[ "$defaults" = 0 ] && fast_monitor
registered() { [ "$(monitor_sql "SELECT count(*) FROM pgautofailover.node WHERE nodename = '$1'")" = 1 ]; }
# One node at a time: the coordinator first (it registers itself), then each group's primary (its keeper adds it to the
# coordinator's pg_dist_node), then the standbys.
for node in "${nodes[@]}"; do
  if [ "$node" = coord ]; then
    autoctl create coordinator --pgdata "$formation/$node" --pgport "${node_port[$node]}" --hostname 127.0.0.1 --name "$node" \
      --auth trust --no-ssl --monitor "$(monitor_uri)" --dbname crema --run >> "$out/$node.log" 2>&1 &
  else
    autoctl create worker --pgdata "$formation/$node" --pgport "${node_port[$node]}" --hostname 127.0.0.1 --name "$node" \
      --group "${node_group[$node]}" --auth trust --no-ssl --monitor "$(monitor_uri)" --dbname crema --run >> "$out/$node.log" 2>&1 &
  fi
  KEEPER_PID[$node]=$!
  case "$node" in
    coord|w1a|w2a) wait_for 120 primary_is "$node" "${node_group[$node]}" || { echo "$node did not start as its group's primary: $(nodes_state); see $node.log" >&2; exit 1; } ;;
    *) wait_for 120 registered "$node" || { echo "$node did not register with the monitor: $(nodes_state); see $node.log" >&2; exit 1; } ;;
  esac
done
wait_healthy 300 || { echo "the formation did not become healthy: $(nodes_state)" >&2; exit 1; }
[ "$defaults" = 0 ] && fast_keepers "${nodes[@]}"
log "formation: $(nodes_state)"

conninfo="postgres://postgres@127.0.0.1:$coord_port/crema?connect_timeout=2"
q() { psql "$conninfo" -XAtq -F ' ' -v ON_ERROR_STOP=1 -c "$1"; }
dist_nodes() { q "SELECT string_agg(groupid || '=' || nodeport || CASE WHEN metadatasynced OR NOT hasmetadata THEN '' ELSE '(not synced)' END, ' ' ORDER BY groupid) FROM pg_dist_node"; }
metadata_synced() { [ "$(q "SELECT bool_and(metadatasynced) FROM pg_dist_node WHERE hasmetadata")" = t ]; }
log "coordinator's pg_dist_node (group=port): $(dist_nodes)"
# The coordinator's log names the parameters of a statement that failed (its tenant), for coord-postgres.log.
q "ALTER SYSTEM SET log_parameter_max_length_on_error = -1" > /dev/null
# -R: how often the coordinator finishes transactions left prepared on a worker (Citus's default: 1 min).
[ -n "$recover" ] && q "ALTER SYSTEM SET citus.recover_2pc_interval = '$recover'" > /dev/null
q "SELECT pg_reload_conf()" > /dev/null
log "citus.recover_2pc_interval $(q "SHOW citus.recover_2pc_interval")"
log "crema's database URL: $conninfo"
CREMA_DATABASE_URL="$conninfo" LOG_LEVEL=warning "$CREMA" migrate > "$out/migrate.log" 2>&1 \
  || { echo "crema migrate failed:" >&2; cat "$out/migrate.log" >&2; exit 1; }
grep -i citus "$out/migrate.log" | head -3 | tee -a "$out/run.log"
log "reference tables' placements (table: groups): $(q "SELECT string_agg(rel || ': ' || groups, '; ') FROM (SELECT s.logicalrelid::text AS rel, string_agg(DISTINCT p.groupid::text, ',') AS groups
  FROM pg_dist_shard s JOIN pg_dist_placement p USING (shardid) WHERE s.logicalrelid IN ('api_keys'::regclass, 'tenants'::regclass) GROUP BY s.logicalrelid) x"); citus.task_assignment_policy $(q "SHOW citus.task_assignment_policy")"
q "SET client_min_messages = warning; CREATE SCHEMA IF NOT EXISTS drill_probe; CREATE TABLE IF NOT EXISTS drill_probe.t (k int)" > /dev/null
q "SELECT create_distributed_table('drill_probe.t', 'k')" > /dev/null
# group_of TENANT: the worker group that holds the tenant's shards (every table is co-located with stores).
group_of() { q "SELECT groupid FROM pg_dist_placement WHERE shardid = get_shard_id_for_distribution_column('stores', '$1')"; }

start_apns_sim "$sim_port" "$out/sim" "$out/sim.log"
: > "$out/received.jsonl"
python3 drills/abuse_drill.py receiver --listen "$receiver_port" --out "$out/received.jsonl" --duration 86400 \
  2>> "$out/receiver.log" &
RECEIVER_PID=$!
master_key=$(python3 -c 'import base64, os; print(base64.b64encode(os.urandom(32)).decode())')
admin_key=citus-failover-admin-key-0001
CREMA_ADMIN_KEY=$admin_key CREMA_MASTER_KEY=$master_key CREMA_WEBHOOK_ALLOW_PRIVATE=1 CREMA_LOG_LEVEL=info \
  start_serve "$conninfo" "$port" 16 "$out/serve.log"
wait_ready "$port" 60
serve_pid=$SERVE_PID sim_pid=$SIM_PID

# The second tenant: the first of these names whose shards are on the other group than the default tenant's.
group_a=$(group_of default)
tenant_b=""
for name in harbor pier quay wharf dock jetty marina lagoon; do
  [ "$(group_of "$name")" != "$group_a" ] && { tenant_b=$name; break; }
done
[ -n "$tenant_b" ] || { echo "no candidate tenant name has its shards off group $group_a" >&2; exit 1; }
group_b=$(group_of "$tenant_b")
call() { # METHOD PATH KEY [BODY] [IDEMPOTENCY-KEY]
  curl -sf -m 10 -X "$1" "http://127.0.0.1:$port$2" -H "Authorization: Bearer $3" -H 'Content-Type: application/json' \
    ${5:+-H "Idempotency-Key: $5"} ${4:+-d "$4"}
}
call PUT "/v1/admin/tenants/$tenant_b" "$admin_key" '{"name":"Citus drill second tenant"}' > /dev/null
call PUT "/v1/admin/tenants/$tenant_b/apps/$CREMA_APNS_TOPIC" "$admin_key" '{"team_id":"'"$CREMA_APNS_TEAM_ID"'"}' > /dev/null
call POST "/v1/admin/tenants/$tenant_b/apps/$CREMA_APNS_TOPIC/apns-keys" "$admin_key" \
  '{"key_id":"'"$CREMA_APNS_KEY_ID"'","p8_path":"'"$CREMA_APNS_KEY_FILE"'"}' "$tenant_b-apns-key" > /dev/null
b_key() { call POST "/v1/admin/tenants/$tenant_b/api-keys" "$admin_key" "{\"role\":\"$1\"}" "$tenant_b-$1" | python3 -c 'import json, sys; print(json.load(sys.stdin)["key"])'; }
B_POS=$(b_key pos) B_BARISTA=$(b_key barista) B_APP=$(b_key app)
create_stores "$port" 8
create_stores "$port" 8 "$B_POS"
hook_a=$(python3 drills/failover_client.py setup --port "$port" --pos-key "$BENCH_POS_KEY" --app-key "$BENCH_APP_KEY" \
  --receiver-port "$receiver_port" --run-id "$(basename "$out")-a" --token-tag a-)
hook_b=$(python3 drills/failover_client.py setup --port "$port" --pos-key "$B_POS" --app-key "$B_APP" \
  --receiver-port "$receiver_port" --run-id "$(basename "$out")-b" --token-tag b-)
group=${group:-$group_a}
# The probe writes one row to a shard of the failing group (a router insert through the coordinator).
probe_key=$(q "SELECT k FROM generate_series(1, 1000) k WHERE (SELECT groupid FROM pg_dist_placement
  WHERE shardid = get_shard_id_for_distribution_column('drill_probe.t', k)) = $group LIMIT 1")
probe_sql="INSERT INTO drill_probe.t VALUES ($probe_key)"
log "tenants: default on group $group_a, $tenant_b on group $group_b; the failover is group $group's"
log "crema serve pid $serve_pid on :$port, apns-sim pid $sim_pid on :$sim_port, webhooks $hook_a $hook_b to :$receiver_port"

open_work() { q "SELECT (SELECT count(*) FROM delivery_outbox WHERE state IN ('pending', 'inflight')) + (SELECT count(*) FROM webhook_deliveries WHERE state IN ('pending', 'inflight'))"; }
drained() { [ "$(open_work)" = 0 ]; }
# load TENANT-LETTER POS BARISTA APP THREADS: one failover_client.py load for one tenant, its files RDIR/LETTER-*.
load() {
  timeout $((duration + 600)) python3 drills/failover_client.py load --port "$port" --pos-key "$2" --barista-key "$3" \
    --app-key "$4" --journal "$rdir/$1-journal.jsonl" --outcomes "$rdir/$1-outcomes.jsonl" --retried "$rdir/$1-retried.jsonl" \
    --stop-file "$rdir/stop" --threads "$5" --duration $((duration + 540)) --run-id "$run_id-$1" > "$rdir/$1-client.txt" 2>&1
}

failures=0
: > "$out/results.jsonl"
for run in $(seq 1 "$runs"); do
  rdir=$out/run-$run
  mkdir -p "$rdir"
  run_id=cf$run-$(date -u +%H%M%S)
  sim_curl DELETE /sim/requests > /dev/null
  serve_lines=$(wc -l < "$out/serve.log")
  before=$(primary_node "$group")
  log "run $run/$runs ($mode): group $group's primary $before; $threads workers"
  t_start=$(now)
  load a "$BENCH_POS_KEY" "$BENCH_BARISTA_KEY" "$BENCH_APP_KEY" $((threads / 2)) &
  CLIENT_A=$!
  load b "$B_POS" "$B_BARISTA" "$B_APP" $((threads - threads / 2)) &
  CLIENT_B=$!
  python3 drills/failover_client.py probe --conninfo "$conninfo" --sql "$probe_sql" --outcomes "$rdir/probe.jsonl" --stop-file "$rdir/stop" &
  PROBE_PID=$!
  sleep "$fail_after"
  t_fail=$(now)
  if [ "$mode" = perform ]; then
    autoctl perform failover --pgdata "$formation/monitor" --group "$group" >> "$rdir/perform.log" 2>&1 &
    perform_pid=$!
  else
    kill_node "$before"
    log "kill -9 of $before's keeper and postmaster (pids $victims), $(python3 -c "print(f'{$(now) - $t_fail:.2f}')") s after t_fail"
  fi
  wait_for 300 primary_is_not "$before" "$group" || log "no new primary in group $group within 300 s: $(nodes_state)"
  t_promoted=$(now)
  if [ "$mode" = perform ]; then
    wait "$perform_pid" || log "pg_autoctl perform failover failed; see run-$run/perform.log"
    log "pg_autoctl perform failover returned $(python3 -c "print(f'{$(now) - $t_fail:.2f}')") s after it began"
  fi
  after_state=$(primary_node "$group")
  log "new primary $after_state after $(python3 -c "print(f'{$t_promoted - $t_fail:.2f}')") s: $(nodes_state)"
  [ "$mode" = kill ] && run_keeper "$before"
  wait_healthy 300 || log "the formation was not healthy within 300 s: $(nodes_state)"
  t_healthy=$(now)
  log "formation healthy $(python3 -c "print(f'{$t_healthy - $t_fail:.2f}')") s after the failover: $(nodes_state)"
  log "coordinator's pg_dist_node: $(dist_nodes)"
  dist_port=$(q "SELECT nodeport FROM pg_dist_node WHERE groupid = $group AND noderole = 'primary'")
  [ "$dist_port" = "${node_port[${after_state:-none}]:-}" ] || log "pg_dist_node names port $dist_port for group $group, not the new primary's (${after_state:-none})"
  # The coordinator marks every worker's metadata stale when a node changes; its maintenance daemon syncs it again
  # (citus.metadata_sync_interval). Until then DDL through the coordinator is refused ("is a metadata node, but is out of sync").
  wait_for 300 metadata_synced || log "the workers' metadata was not synced within 300 s: $(dist_nodes)"
  t_synced=$(now)
  metadata_synced_s=$(python3 -c "print(f'{$t_synced - $t_fail:.2f}')")
  log "workers' metadata synced $metadata_synced_s s after the failover: $(dist_nodes)"
  sleep "$after"
  remaining=$(python3 -c "print(max(0, $duration - ($(now) - $t_start)))")
  sleep "$remaining"
  touch "$rdir/stop"
  wait "$CLIENT_A" || log "the load client of the default tenant failed: $(cat "$rdir/a-client.txt")"
  wait "$CLIENT_B" || log "the load client of $tenant_b failed: $(cat "$rdir/b-client.txt")"
  CLIENT_A="" CLIENT_B=""
  wait "$PROBE_PID" || true
  PROBE_PID=""
  t_load_end=$(now)
  for kind in journal outcomes retried; do cat "$rdir/a-$kind.jsonl" "$rdir/b-$kind.jsonl" > "$rdir/$kind.jsonl"; done
  log "at the end of the load: outbox $(q "SELECT string_agg(state || '=' || n, ' ') FROM (SELECT state, count(*) n FROM delivery_outbox GROUP BY 1) s"), webhooks $(q "SELECT string_agg(state || '=' || n, ' ') FROM (SELECT state, count(*) n FROM webhook_deliveries GROUP BY 1) s")"
  wait_for 300 drained || log "not drained within 300 s: $(open_work) open"
  t_drained=$(now)
  sleep 0.5  # the receiver and the simulator finish writing down what is on the wire
  sim_curl GET /sim/requests > "$rdir/sim-requests.json"
  log "clients: default $(cat "$rdir/a-client.txt"); $tenant_b $(cat "$rdir/b-client.txt")"

  acked=$(verify_journal "$conninfo" "$rdir/journal.jsonl" "$rdir") || true
  log "journal: $acked"
  collect_run "$conninfo" "$rdir" "$t_start" "$run_id"
  restarted=no
  for pid in "$serve_pid" "$sim_pid"; do kill -0 "$pid" 2> /dev/null || restarted=yes; done
  { tail -n +"$((serve_lines + 1))" "$out/serve.log" | grep -E 'LISTEN connection|listening again' || true; } > "$rdir/listener.log"
  lost_events=$(python3 -c "import sys; print(sys.argv[1].split()[-1])" "$acked")
  python3 drills/failover_report.py result "$rdir" "$mode" "$restarted" "$t_start" "$t_fail" "$t_promoted" "$t_healthy" \
    "$t_load_end" "$t_drained" "$before" "$after_state" "$lost_events" "$out/results.jsonl" --label citus-failover \
    --extra "group=$group" --extra "metadata_synced_s=$metadata_synced_s" \
    --tenant "default(group $group_a)=$rdir/a-outcomes.jsonl" --tenant "$tenant_b(group $group_b)=$rdir/b-outcomes.jsonl" \
    | tee -a "$out/run.log"
  [ "${PIPESTATUS[0]}" = 0 ] || failures=$((failures + 1))
  log "LISTEN connection: $(grep -c 'lost the LISTEN' "$rdir/listener.log") lost, back after: $(grep -o 'outage_ms[^,}]*' "$rdir/listener.log" | tr '\n' ' ')"
done

python3 drills/failover_report.py summary "$out/results.jsonl" --cols metadata_synced_s | tee "$out/summary.txt"
log "runs with a violation: $failures of $runs"
exit $((failures > 0))
