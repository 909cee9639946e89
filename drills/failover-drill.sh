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

source drills/failover_lib.sh

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

ensure_pg_autoctl

bench_workspace failover-drill
formation_folder
formation_nodes=2
RECEIVER_PID="" CLIENT_PID="" PROBE_PID=""
cleanup() {
  [ -n "$CLIENT_PID" ] && stop_pid "$CLIENT_PID" 5
  [ -n "$PROBE_PID" ] && stop_pid "$PROBE_PID" 5
  [ -n "$RECEIVER_PID" ] && stop_pid "$RECEIVER_PID" 5
  [ -n "${SERVE_PID:-}" ] && stop_pid "$SERVE_PID"
  [ -n "${SIM_PID:-}" ] && stop_pid "$SIM_PID"
  SERVE_PID="" SIM_PID=""
  stop_formation node1 node2
  bench_cleanup
}
trap cleanup EXIT

read -r monitor_port node1_port node2_port < <(free_ports 3)
declare -A node_port=([node1]=$node1_port [node2]=$node2_port)

{ machine_info; echo "pg_autoctl: $(pg_autoctl --version | head -1)"; echo "mode: $mode, runs: $runs, threads: $threads, load >= ${duration}s, fail after ${fail_after}s"
  if [ "$defaults" = 1 ]; then echo "timeouts: pg_auto_failover defaults"; else echo "timeouts: $(echo $FAST_MONITOR_SETTINGS $FAST_KEEPER_SETTINGS)"; fi
} | tee "$out/machine.txt"

log "formation in $formation: monitor :$monitor_port, node1 :$node1_port, node2 :$node2_port"
autoctl create monitor --pgdata "$formation/monitor" --pgport "$monitor_port" --hostname 127.0.0.1 --auth trust --no-ssl \
  --run >> "$out/monitor.log" 2>&1 &
KEEPER_PID[monitor]=$!
wait_for 60 monitor_sql "SELECT 1" > /dev/null || { echo "the monitor did not start; see monitor.log" >&2; exit 1; }
[ "$defaults" = 0 ] && fast_monitor
for node in node1 node2; do
  autoctl create postgres --pgdata "$formation/$node" --pgport "${node_port[$node]}" --hostname 127.0.0.1 --name "$node" \
    --auth trust --no-ssl --monitor "$(monitor_uri)" --dbname crema --run >> "$out/$node.log" 2>&1 &
  KEEPER_PID[$node]=$!
  if [ "$node" = node1 ]; then
    wait_for 90 primary_is node1 || { echo "node1 did not become primary; see node1.log" >&2; exit 1; }
  fi
done
wait_healthy 180 || { echo "the formation did not become healthy: $(nodes_state)" >&2; exit 1; }
[ "$defaults" = 0 ] && fast_keepers node1 node2
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
    kill_node "$before"
    log "kill -9 of $before's keeper and postmaster (pids $victims)"
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
  collect_run "$conninfo" "$rdir" "$t_start" "$run_id"
  restarted=no
  for pid in "$serve_pid" "$sim_pid"; do kill -0 "$pid" 2> /dev/null || restarted=yes; done
  { tail -n +"$((serve_lines + 1))" "$out/serve.log" | grep -E 'LISTEN connection|listening again' || true; } > "$rdir/listener.log"
  lost_events=$(python3 -c "import sys; print(sys.argv[1].split()[-1])" "$acked")
  python3 drills/failover_report.py result "$rdir" "$mode" "$restarted" "$t_start" "$t_fail" "$t_promoted" "$t_healthy" \
    "$t_load_end" "$t_drained" "$before" "$after_state" "$lost_events" "$out/results.jsonl" | tee -a "$out/run.log"
  [ "${PIPESTATUS[0]}" = 0 ] || failures=$((failures + 1))
  log "LISTEN connection: $(grep -c 'lost the LISTEN' "$rdir/listener.log") lost, back after: $(grep -o 'outage_ms[^,}]*' "$rdir/listener.log" | tr '\n' ' ')"
done

python3 drills/failover_report.py summary "$out/results.jsonl" | tee "$out/summary.txt"
log "runs with a violation: $failures of $runs"
exit $((failures > 0))
