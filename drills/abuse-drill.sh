#!/usr/bin/env bash
# Abuse drill (issue "Isolate load, not only data"): an ordinary tenant's steady traffic, first on a quiet server,
# then next to each of three floods by another tenant, and how much the floods cost it.
#
#   ordinary  W workers of the tenant `ordinary`, each with its own pos and barista key, running order lifecycles
#             (POST /v1/orders, then events started -> ready -> picked_up) at -r requests a second each; each
#             request's latency counts from its scheduled start. The tenant has one webhook endpoint
#             (order.changed) at a local receiver that answers 200 at once: its webhook lag (the order event's
#             HTTP answer -> the receiver getting that order id and version) is measured in every phase.
#   tokens    the tenant `abuser`'s app key registers new alert tokens for one customer as fast as answers come
#             (limit: 20 per kind, then 409 limit_reached; the key's rate: 429 rate_limited).
#   streams   its dashboard key opens up to 1,000 concurrent GET /v1/stream and holds them (limit: 64 per key,
#             409); refused slots are tried again, 100 a second at most; all are closed at the end.
#   webhooks  it registers 25 webhook endpoints (limit: 20 per tenant, 409) at a local tarpit that accepts
#             connections and never answers; deleted at the end.
#   busy      one of its customers works hard within the limits (issue #46): 20 alert tokens, then its pos and
#             barista keys post that customer's order lifecycles as fast as their rate allows (4 threads trying
#             100 requests/s each against 200/s per key), so each ready fans out to 20 pushes; target <= 3x.
# The limits are docs/limits.md's defaults. In each flood two threads of the abuser also place and advance orders
# of the flooding customer, at -r each.
# Phases, after 2 s of unmeasured warm-up: quiet, then the chosen floods in this order; each measures D seconds
# (a flood starts 2 s before its phase).
#
# Reports per phase the ordinary tenant's p50/p99/max latency, requests/s, errors, p99 against the quiet p99
# (target <= 2x), its webhook lag, crema serve's and PostgreSQL's CPU, and the server's limit refusals; then one
# line per flood:
#   abuse: flood=tokens quiet_p99_ms=… flood_p99_ms=… ratio=… refused=… target=met|missed …
# (webhooks adds the lag's p99 against the quiet lag's: lag_target). The drill measures: a missed target does
# not fail it. It exits 1 only if the ordinary tenant saw a 5xx (or the drill itself broke).
# The load generators (the ordinary tenant and the floods) are pinned to the last core with taskset when it is
# there, so they take at most one core from the server; crema and PostgreSQL are not pinned. On a small machine
# the ratios are still an upper bound: a real abuser's CPU is not the server's.
#
# Usage: drills/abuse-drill.sh [-d SECONDS] [-w WORKERS] [-r RATE] [-f tokens,streams,webhooks,busy]
#   defaults: -d 20 -w 4 -r 20 -f tokens,streams,webhooks,busy. Environment: CREMA_BIN (default
#   .build-release/release/crema; CREMA_BIN=.build/debug/crema works), BENCH_PORT (default 18094; the receiver
#   and the tarpit take the next two). Needs postgresql-15, curl, python3.
#   Outputs: bench/results/abuse-drill-<time>/. Loopback only; every loop bounded by -d and counts.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh

duration=20 workers=4 rate=20 floods=tokens,streams,webhooks,busy
while getopts "d:w:r:f:" opt; do
  case "$opt" in
    d) duration=$OPTARG ;;
    w) workers=$OPTARG ;;
    r) rate=$OPTARG ;;
    f) floods=$OPTARG ;;
    *) sed -n '2,38p' "$0" >&2; exit 2 ;;
  esac
done
for v in "$duration" "$workers" "$rate"; do
  [[ "$v" =~ ^[0-9]+$ ]] && [ "$v" -gt 0 ] || { echo "-d, -w and -r take whole numbers above 0" >&2; exit 2; }
done
selected=()
for f in tokens streams webhooks busy; do [[ ",$floods," == *",$f,"* ]] && selected+=("$f"); done
for f in ${floods//,/ }; do
  case "$f" in tokens|streams|webhooks|busy) ;; *) echo "unknown flood '$f' (tokens, streams, webhooks, busy)" >&2; exit 2 ;; esac
done
# The load generators' core: the last one, when taskset can pin them there.
pin=()
if command -v taskset > /dev/null && [ "$(nproc)" -gt 1 ]; then pin=(taskset -c "$(( $(nproc) - 1 ))"); fi
port=${BENCH_PORT:-18094}
receiver_port=$((port + 1)) tarpit_port=$((port + 2))
ramp=2
CREMA=$(crema_bin)
# The stream flood holds 1,000 connections; crema serve takes one descriptor for each.
if [ "$(ulimit -n)" -lt 4096 ]; then ulimit -n 4096 2> /dev/null || { echo "open-file limit $(ulimit -n) < 4096" >&2; exit 2; }; fi

bench_workspace abuse-drill
RECEIVER_PID="" TARPIT_PID="" FLOOD_PID=""
cleanup() {
  [ -n "$FLOOD_PID" ] && stop_pid "$FLOOD_PID" 20
  [ -n "$TARPIT_PID" ] && stop_pid "$TARPIT_PID" 5
  [ -n "$RECEIVER_PID" ] && stop_pid "$RECEIVER_PID" 5
  bench_cleanup
}
trap cleanup EXIT
# Not for the background processes: `drill … &` would fork a subshell, and its $! would not be Python's.
drill() { "${pin[@]}" python3 drills/abuse_drill.py "$@"; }
metrics() { curl -s -m 5 "http://127.0.0.1:$port/metrics" > "$1" || true; }

admin_key=drill-admin-$(python3 -c 'import secrets; print(secrets.token_hex(12))')
master_key=$(python3 -c 'import base64, os; print(base64.b64encode(os.urandom(32)).decode())')
machine_info > "$out/machine.txt"
log "commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- Sources || echo ' (+ uncommitted changes)'), binary $CREMA"
log "phases of ${duration}s: quiet ${selected[*]}; ordinary: $workers workers x $rate requests/s; results in $out"
log "fresh PostgreSQL cluster in $cluster; crema serve on 127.0.0.1:$port, receiver :$receiver_port, tarpit :$tarpit_port"
conninfo=$(start_cluster "$cluster" crema_abuse "$out/postgres-start.log")
CREMA_ADMIN_KEY=$admin_key CREMA_MASTER_KEY=$master_key CREMA_WEBHOOK_ALLOW_PRIVATE=1 \
  CREMA_RATE_LIMIT=200/400 start_serve "$conninfo" "$port" 8 "$out/serve.log"
wait_ready "$port" 60

# Both peers live as long as the drill at most (the trap stops them sooner).
max_run=$(( (duration + ramp + 60) * 4 + 120 ))
: > "$out/received.jsonl"
python3 drills/abuse_drill.py receiver --listen "$receiver_port" --out "$out/received.jsonl" --duration "$max_run" \
  2>> "$out/receiver.log" &
RECEIVER_PID=$!
python3 drills/abuse_drill.py tarpit --listen "$tarpit_port" --out "$out/tarpit.json" --duration "$max_run" 2>> "$out/tarpit.log" &
TARPIT_PID=$!
sleep 0.5
kill -0 "$RECEIVER_PID" && kill -0 "$TARPIT_PID" || { echo "the receiver or the tarpit did not start" >&2; exit 1; }
log "setup: $(drill setup --port "$port" --admin-key "$admin_key" --workers "$workers" --receiver-port "$receiver_port" --out "$out/keys.json")"

# cpu_ms_per_s TICKS0 TICKS1 T0 T1: CPU ms per second of wall time.
cpu_ms_per_s() { python3 -c "print(round(($2 - $1) * 10 / ($4 - $3)))"; }

# run_phase NAME: the ordinary traffic for D seconds, next to the flood NAME (none for quiet).
run_phase() {
  local name=$1 t0 t1 s0 s1 p0 p1 deadline
  metrics "$out/$name-metrics-before.txt"
  if [ "$name" != quiet ]; then
    "${pin[@]}" python3 drills/abuse_drill.py flood "$name" --port "$port" --keys "$out/keys.json" --rate "$rate" \
      --duration $((duration + ramp + 1)) --tarpit-port "$tarpit_port" > "$out/$name-flood.json" 2> "$out/$name-flood.log" &
    FLOOD_PID=$!
    sleep "$ramp"
  fi
  t0=$(date +%s.%N) s0=$(ticks_of "$SERVE_PID") p0=$(cluster_ticks "$cluster")
  drill ordinary --port "$port" --keys "$out/keys.json" --workers "$workers" --rate "$rate" --duration "$duration" \
    --out "$out/$name-requests.jsonl" --answers "$out/$name-answers.jsonl" > "$out/$name-ordinary.json"
  t1=$(date +%s.%N) s1=$(ticks_of "$SERVE_PID") p1=$(cluster_ticks "$cluster")
  if [ -n "$FLOOD_PID" ]; then
    deadline=$((SECONDS + ramp + 40))
    while kill -0 "$FLOOD_PID" 2> /dev/null && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.2; done
    stop_pid "$FLOOD_PID" 20
    FLOOD_PID=""
  fi
  echo "{\"serve_cpu_ms_per_s\": $(cpu_ms_per_s "$s0" "$s1" "$t0" "$t1"), \"postgres_cpu_ms_per_s\": $(cpu_ms_per_s "$p0" "$p1" "$t0" "$t1")}" \
    > "$out/$name-meta.json"
  metrics "$out/$name-metrics-after.txt"
  log "$name: ordinary $(cat "$out/$name-ordinary.json")"
  [ "$name" = quiet ] || log "$name: flood $(cat "$out/$name-flood.json" 2> /dev/null)"
  drill lag --answers "$out/$name-answers.jsonl" --received "$out/received.jsonl" --grace 30 > "$out/$name-lag.json"
  log "$name: webhook lag $(cat "$out/$name-lag.json")"
}

# Unmeasured: the first requests of each connection and key (and a cold debug build) are not the quiet baseline.
drill ordinary --port "$port" --keys "$out/keys.json" --workers "$workers" --rate "$rate" --duration 2 \
  --out "$out/warmup-requests.jsonl" --answers /dev/null > "$out/warmup-ordinary.json"
run_phase quiet
for f in "${selected[@]}"; do
  sleep 2  # what the last phase left (webhook retries, closing streams) settles a moment
  run_phase "$f"
done
stop_pid "$TARPIT_PID" 5
TARPIT_PID=""
[ -s "$out/tarpit.json" ] && log "tarpit: $(cat "$out/tarpit.json")"
log "summary"
status=0
(IFS=,; drill report --dir "$out" --floods "${selected[*]}") | tee -a "$out/run.log" "$out/summary.txt" || status=1
exit "$status"
