# Shared by drills/failover-drill.sh (one primary and its standby) and drills/citus-failover-drill.sh (a Citus
# formation: a coordinator and worker groups of a primary and a standby): a pg_auto_failover formation under one
# temporary folder ($formation), run as the `postgres` user, and what both drills read from the database after a run.
# Sourced after bench/lib.sh; the caller sets $formation, $out and $monitor_port, and $formation_nodes (how many
# nodes the healthy formation has).

# Shorter detection and promotion than pg_auto_failover's defaults (5 s / 5 s / 2 / 2 s / 20 s / 30 s; keeper 20 s).
# A node is failed after node_considered_unhealthy_timeout without a keeper report and a failed health check; the
# standby is promoted once the old primary confirmed its demotion or primary_demote_timeout passed. A cut-off
# primary demotes itself after network_partition_timeout, which must stay below primary_demote_timeout.
FAST_MONITOR_SETTINGS="pgautofailover.health_check_period=1000 pgautofailover.health_check_timeout=1000
pgautofailover.health_check_max_retries=1 pgautofailover.health_check_retry_delay=500
pgautofailover.node_considered_unhealthy_timeout=3000 pgautofailover.primary_demote_timeout=6000"
FAST_KEEPER_SETTINGS="timeout.network_partition_timeout=4"

declare -A KEEPER_PID=()

# ensure_pg_autoctl: Debian's postgresql-15-auto-failover when pg_autoctl is missing.
ensure_pg_autoctl() {
  if ! command -v pg_autoctl > /dev/null; then
    echo "pg_autoctl is missing: installing postgresql-15-auto-failover" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql-15-auto-failover > /dev/null
  fi
}

# formation_folder: bench_workspace's empty temporary folder ($cluster), readable by the postgres user.
formation_folder() {
  formation=$cluster
  chmod 755 "$formation"
  [ "$(id -u)" = 0 ] && chown postgres:postgres "$formation"
  return 0
}

# free_ports N: N TCP ports free on 127.0.0.1 now.
free_ports() {
  python3 -c '
import socket, sys
socks = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in socks: s.bind(("127.0.0.1", 0))
print(*(s.getsockname()[1] for s in socks))' "$1"
}

# autoctl ARGS: pg_autoctl as the postgres user, its configuration and state inside the formation's folder.
autoctl() {
  local env=(env "PATH=/usr/lib/postgresql/15/bin:/usr/local/bin:/usr/bin:/bin" "XDG_CONFIG_HOME=$formation/config"
    "XDG_DATA_HOME=$formation/share" "XDG_RUNTIME_DIR=$formation/run")
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "${env[@]}" pg_autoctl "$@"; else "${env[@]}" pg_autoctl "$@"; fi
}
monitor_uri() { echo "postgres://autoctl_node@127.0.0.1:$monitor_port/pg_auto_failover?sslmode=disable"; }
monitor_sql() { psql "$(monitor_uri)" -XAtq -F ' ' -c "$1"; }
nodes_state() { monitor_sql "SELECT string_agg(nodename || '=' || reportedstate || '/' || goalstate, ' ' ORDER BY nodeid) FROM pgautofailover.node"; }
# primary_node [GROUP]: the settled primary of a group (default 0, the only one of a formation without Citus).
primary_node() { monitor_sql "SELECT nodename FROM pgautofailover.node WHERE groupid = ${1:-0} AND reportedstate IN ('primary', 'wait_primary', 'single') AND goalstate = reportedstate"; }
primary_is() { [ "$(primary_node "${2:-0}")" = "$1" ]; }
primary_is_not() { local p; p=$(primary_node "${2:-0}") && [ -n "$p" ] && [ "$p" != "$1" ]; }
# healthy: every one of the $formation_nodes nodes settled as a primary, a secondary, or a group's only node (single).
healthy() { [ "$(monitor_sql "SELECT count(*) FILTER (WHERE reportedstate = goalstate AND reportedstate IN ('primary', 'secondary', 'single')) || ' ' || count(*) FROM pgautofailover.node")" = "$formation_nodes $formation_nodes" ]; }
# wait_for SECONDS CONDITION...: polls CONDITION every 0.1 s (bounded).
wait_for() {
  local deadline=$((SECONDS + $1)); shift
  until "$@" 2> /dev/null; do
    [ "$SECONDS" -lt "$deadline" ] || return 1
    sleep 0.1
  done
}
now() { date +%s.%N; }
# wait_healthy SECONDS: waits (bounded) for every node to settle. A standby's base backup (a standby joining, or a
# killed primary whose pg_rewind failed) waits for a checkpoint, spread over minutes by default: ask the primary of
# each group not yet settled for one.
wait_healthy() {
  local deadline=$((SECONDS + $1)) host port
  until healthy 2> /dev/null; do
    [ "$SECONDS" -lt "$deadline" ] || return 1
    while read -r host port; do
      [ -n "$port" ] && psql "host=$host port=$port user=postgres dbname=crema" -XAtq -c CHECKPOINT > /dev/null 2>&1 || true
    done < <(monitor_sql "SELECT p.nodehost, p.nodeport FROM pgautofailover.node p WHERE p.reportedstate IN ('primary', 'wait_primary', 'single')
      AND EXISTS (SELECT 1 FROM pgautofailover.node s WHERE s.groupid = p.groupid AND s.nodeid <> p.nodeid
                  AND (s.reportedstate <> s.goalstate OR s.reportedstate NOT IN ('primary', 'secondary')))" 2> /dev/null)
    sleep 0.5
  done
}
# run_keeper NODE: `pg_autoctl run` of a node already created; sets KEEPER_PID[NODE].
run_keeper() {
  autoctl run --pgdata "$formation/$1" >> "$out/$1.log" 2>&1 &
  KEEPER_PID[$1]=$!
}
# kill_node NODE: kill -9 of NODE's keeper (every pg_autoctl process under it: supervisor, postgres controller,
# node-active service) and its postmaster; sets $victims to their pids. Not in a subshell: it reaps the keeper.
# The keeper's processes come from one `ps`, not a pgrep per descendant: the postmaster's backends are descendants too,
# and a walk with one pgrep each took seconds under load, so the kill came that long after the drill's t_fail.
kill_node() {
  local keeper=${KEEPER_PID[$1]}
  victims="$(ps -eo pid=,ppid=,comm= | awk -v root="$keeper" '
    { parent[$1] = $2; name[$1] = $3 }
    END { for (p in parent) { q = parent[p]; while (q != root && (q in parent) && q > 1) q = parent[q]; if (q == root && name[p] == "pg_autoctl") print p } }') $(head -1 "$formation/$1/postmaster.pid")"
  kill -KILL $victims
  wait "$keeper" 2> /dev/null || true
  victims=$(echo $victims)
}
# fast_monitor: the monitor's shorter timeouts (FAST_MONITOR_SETTINGS), reloaded.
fast_monitor() {
  local setting
  for setting in $FAST_MONITOR_SETTINGS; do
    psql "host=127.0.0.1 port=$monitor_port user=postgres dbname=pg_auto_failover" -XAtq -c "ALTER SYSTEM SET ${setting%%=*} = '${setting#*=}'"
  done
  psql "host=127.0.0.1 port=$monitor_port user=postgres dbname=pg_auto_failover" -XAtq -c "SELECT pg_reload_conf()" > /dev/null
}
# fast_keepers NODE...: the keepers' shorter timeouts (FAST_KEEPER_SETTINGS), reloaded.
fast_keepers() {
  local node setting
  for node in "$@"; do
    for setting in $FAST_KEEPER_SETTINGS; do autoctl config set --pgdata "$formation/$node" "${setting%%=*}" "${setting#*=}" > /dev/null; done
    autoctl reload --pgdata "$formation/$node" > /dev/null
  done
}
# stop_formation NODE...: stops the nodes (then the monitor) and their keepers, and whatever outlived them (processes
# whose command line names this drill's own folder).
stop_formation() {
  local node pid
  for node in "$@" monitor; do
    [ -d "$formation/$node" ] && autoctl stop --pgdata "$formation/$node" --immediate > /dev/null 2>&1 || true
  done
  for pid in "${KEEPER_PID[@]}"; do stop_pid "$pid" 10; done
  for pid in $(ps -eo pid=,args= | awk -v dir="$formation/" 'index($0, dir) { print $1 }'); do kill -KILL "$pid" 2> /dev/null || true; done
}

# collect_run CONNINFO RDIR T_START RUN_ID: RDIR/retried.csv and RDIR/db.json, what drills/failover_report.py reads from
# the database about the run's acknowledged commands (RDIR/journal.csv, written by verify_journal, and
# RDIR/retried.jsonl): their planned pushes, the sends since T_START, their webhooks, the retried commands with one
# effect, orders placed twice (pos_ref starting with RUN_ID). The tables are copied to temporary ones first, so the
# same joins run on a Citus coordinator, where a correlated subquery on a distributed table is not planned.
collect_run() {
  local conninfo=$1 rdir=$2 t_start=$3 run_id=$4
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
CREATE TEMP TABLE run_events AS SELECT order_id, event_type FROM order_events WHERE order_id IN (SELECT order_id FROM retried);
CREATE TEMP TABLE run_outbox AS SELECT order_id, order_version, apns_id, state, created_at FROM delivery_outbox
  WHERE order_id IN (SELECT order_id FROM journal);
CREATE TEMP TABLE run_webhooks AS SELECT e.order_id, (e.body -> 'data' -> 'order' ->> 'version')::int AS version, w.state
  FROM webhook_deliveries w JOIN webhook_events e ON e.tenant_id = w.tenant_id AND e.event_id = w.event_id
  WHERE e.order_id IN (SELECT order_id FROM journal);
CREATE TEMP TABLE run_sent AS SELECT sent_at FROM delivery_outbox WHERE sent_at >= to_timestamp($t_start);
CREATE TEMP TABLE run_orders AS SELECT tenant_id, store_id, pos_ref FROM orders WHERE pos_ref LIKE '$run_id-%';
SELECT json_build_object(
  'pushes', (SELECT coalesce(json_agg(json_build_object('apns_id', lower(d.apns_id::text), 'state', d.state,
                                                        'created_at', extract(epoch FROM d.created_at))), '[]')
             FROM run_outbox d JOIN journal j ON j.order_id = d.order_id AND j.version = d.order_version
             WHERE d.state NOT IN ('skipped', 'superseded')),
  'superseded', (SELECT count(*) FROM run_outbox d JOIN journal j ON j.order_id = d.order_id AND j.version = d.order_version
                 WHERE d.state = 'superseded'),
  'sent_at', (SELECT coalesce(json_agg(extract(epoch FROM sent_at) ORDER BY sent_at), '[]') FROM run_sent),
  'webhooks', (SELECT coalesce(json_agg(json_build_object('order_id', order_id, 'version', version, 'state', state)), '[]') FROM run_webhooks),
  'retried', (SELECT count(*) FROM retried),
  'retried_one_effect', (SELECT count(*) FROM retried r
                         WHERE (SELECT count(*) FROM run_events e WHERE e.order_id = r.order_id AND e.event_type = r.event_type) = 1),
  'duplicate_orders', (SELECT count(*) FROM (SELECT 1 FROM run_orders GROUP BY tenant_id, store_id, pos_ref HAVING count(*) > 1) d)
);
SQL
}
