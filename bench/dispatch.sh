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
# Usage: bench/dispatch.sh [-r ROUNDS] [-b BATCH] [-w WORKERS] [-c PEER_CONCURRENCY] [-m PEER_MAX_CONNECTIONS]
#                          [-q WAIT] [-u] [N]
#   defaults: N 20000, -r 3, -b 64 -w 2 (crema dispatch's defaults), -c 128 (as many pushes in flight as crema's
#   2 x 64; at 250 and more, aioapns overruns the HTTP/2 connection window and gives up on some pushes),
#   -m 10 (aioapns' default). -q WAIT: before each round, wait up to WAIT s for an idle machine. A side during
#   which other work used more than 15 % of a core is marked NOISY.
# Environment: CREMA_BIN (default .build-release/release/crema), BENCH_SIM_PORT (default 18443).
# Needs postgresql-15 (psql), curl, python3 (venv with aioapns from PyPI: .crema/venv, made on first use).
# Raw outputs: bench/results/dispatch-n<N>-<time>/ (git-ignored); one line per round in
# bench/results/dispatch-history.tsv. Exits 1 when a round is invalid, never because of the ratio.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh

rounds=3 batch=64 workers=2 peer_concurrency=128 peer_connections=10 quiet_wait=0 pinned=1
while getopts "r:b:w:c:m:q:u" opt; do
  case "$opt" in
    r) rounds=$OPTARG ;;
    b) batch=$OPTARG ;;
    w) workers=$OPTARG ;;
    c) peer_concurrency=$OPTARG ;;
    m) peer_connections=$OPTARG ;;
    q) quiet_wait=$OPTARG ;;
    u) pinned=0 ;;
    *) sed -n '2,34p' "$0" >&2; exit 2 ;;
  esac
done
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
    "aioapns max_connections $peer_connections, concurrency $peer_concurrency"
  if [ "$pinned" = 1 ]; then echo "pinned: clients on core $CLIENT_CPU; simulator, PostgreSQL and this script on core $SERVER_CPU"
  else echo "unpinned"; fi
} | tee "$out/machine.txt"

log "fresh PostgreSQL cluster in $cluster; crema apns-sim on 127.0.0.1:$port"
conninfo=$(start_cluster "$cluster" crema_bench "$out/postgres-start.log")
start_apns_sim "$port" "$out/sim" "$out/sim.log"
sim_records() { sim_curl GET /sim/requests > "$1"; }

prepare() { # prepare ROUND: a fresh database with the fixture; sets DB
  DB=$(new_database "$conninfo" "crema_bench_r$1")
  CREMA_DATABASE_URL="$DB" LOG_LEVEL=warning "$CREMA" migrate >> "$out/migrate.log" 2>&1
  psql "$DB" -XAq -v ON_ERROR_STOP=1 -v n="$n" -v topic="$BENCH_BUNDLE_ID" -f bench/outbox-fixture.sql > /dev/null
  psql "$DB" -XAq -v ON_ERROR_STOP=1 -c "VACUUM ANALYZE" -c CHECKPOINT > /dev/null
  [ "$(outbox_open "$DB")" = "$n" ] || { echo "the fixture did not load $n pending rows" >&2; return 1; }
}

side_crema() { # side_crema ROUND
  local r=$1 t0 cr sim0 sim1 pg0 pg1 m0 m1 mt0 mt1 running
  sim_curl DELETE /sim/requests > /dev/null
  sim0=$(ticks_of "$SIM_PID"); pg0=$(cluster_ticks "$cluster"); read -r m0 mt0 < <(machine_ticks)
  t0=$(now)
  # Each output line gets the time it was read (so "Crema dispatcher running" marks the end of start-up).
  CREMA_DATABASE_URL="$DB" LOG_LEVEL=warning ${CLIENT[@]+"${CLIENT[@]}"} "$CREMA" dispatch --batch-size "$batch" --workers "$workers" \
    > >(while IFS= read -r line; do printf '%s %s\n' "$(date +%s.%N)" "$line"; done > "$out/r$r-crema.log") 2>&1 &
  DISPATCH_PID=$!
  wait_drained "$DB" 600 0.1
  cr=$(ticks_of "$DISPATCH_PID"); sim1=$(ticks_of "$SIM_PID"); pg1=$(cluster_ticks "$cluster"); read -r m1 mt1 < <(machine_ticks)
  stop_pid "$DISPATCH_PID"; DISPATCH_PID=""
  sim_records "$out/r$r-crema-sim.json"
  python3 bench/delivery_report.py sim-summary "$out/r$r-crema-sim.json" > "$out/r$r-crema-sim-summary.json"
  psql "$DB" -XAt -F ' ' -c "SELECT count(*) FILTER (WHERE state = 'sent'), count(*),
      extract(epoch FROM min(sent_at)), extract(epoch FROM max(sent_at)), max(attempts) FROM delivery_outbox" \
    > "$out/r$r-crema-db.txt"
  running=$(awk '/dispatcher running/ { print $1; exit }' "$out/r$r-crema.log")
  echo "t0=$t0 running=${running:-0} crema=$cr sim=$((sim1 - sim0)) postgres=$((pg1 - pg0)) peer=0 busy=$((m1 - m0)) total=$((mt1 - mt0))" > "$out/r$r-crema-cpu.txt"
}

side_peer() { # side_peer ROUND
  local r=$1 sim0 sim1 pg0 pg1 peer status=0 m0 m1 mt0 mt1
  sim_curl DELETE /sim/requests > /dev/null
  sim0=$(ticks_of "$SIM_PID"); pg0=$(cluster_ticks "$cluster"); read -r m0 mt0 < <(machine_ticks)
  /usr/bin/time -f '%U %S' -o "$out/r$r-peer-time.txt" timeout 600 ${CLIENT[@]+"${CLIENT[@]}"} "$PY" bench/apns_peer.py --conninfo "$DB" \
    --url "$CREMA_APNS_URL" --ca-file "$CREMA_APNS_CA_FILE" --key-file "$CREMA_APNS_KEY_FILE" \
    --key-id "$CREMA_APNS_KEY_ID" --team-id "$CREMA_APNS_TEAM_ID" --topic "$BENCH_BUNDLE_ID" \
    --concurrency "$peer_concurrency" --max-connections "$peer_connections" \
    > "$out/r$r-peer.json" 2> "$out/r$r-peer.log" || status=$?
  sim1=$(ticks_of "$SIM_PID"); pg1=$(cluster_ticks "$cluster"); read -r m1 mt1 < <(machine_ticks)
  peer=$(awk '{ printf "%d", ($1 + $2) * 100 }' "$out/r$r-peer-time.txt")
  sim_records "$out/r$r-peer-sim.json"
  python3 bench/delivery_report.py sim-summary "$out/r$r-peer-sim.json" > "$out/r$r-peer-sim-summary.json"
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

python3 - "$out" "$n" "$rounds" <<'EOF' | tee "$out/summary.txt"
import json, os, statistics, sys
out, n, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
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
    if cs["accepted"] != n or cs["records"] != n or cs["distinct_tokens"] != n:
        problems.append(f"crema: simulator records {cs['records']}, accepted {cs['accepted']}, tokens {cs['distinct_tokens']}")
    if peer["statuses"].get("200") != n or peer["errors"]: problems.append(f"aioapns: {peer['statuses']} {peer['errors']}")
    if ps["accepted"] != n or ps["records"] != n or ps["distinct_tokens"] != n:
        problems.append(f"aioapns: simulator records {ps['records']}, accepted {ps['accepted']}, tokens {ps['distinct_tokens']}")
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
else:
    print(f"N = {n} pushes per side per round; the simulator's receivedAt has whole seconds only, so pushes/s ="
          f" N / (crema: 'dispatcher running' to the last sent_at; aioapns: first request to last answer)")
f = lambda v: "-" if v is None or v != v else f"{v:.0f}"
print(f"{'round':>5} {'crema/s':>8} {'aioapns/s':>9} {'ratio':>6} | {'sim c/s':>7} {'sim a/s':>7} | {'own c/s':>7} {'own a/s':>7}"
      f" | {'e2e c/s':>7} {'startup':>7} | conns c/a | CPU ms/push crema: dispatch sim pg | aioapns: python sim pg")
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
print("run " + ("valid" if valid else "INVALID"))
with open(os.path.join(os.path.dirname(out), "dispatch-history.tsv"), "a") as h:
    for x in rows:
        h.write("\t".join(map(str, [os.path.basename(out), x["round"], metric, f(x["crema"]), f(x["peer"]), f"{x['ratio']:.3f}",
                                     f(x["crema_e2e"]), "valid" if not x["problems"] else "INVALID",
                                     "noisy" if x["other"] > 15 else "quiet"])) + "\n")
sys.exit(0 if valid else 1)
EOF
