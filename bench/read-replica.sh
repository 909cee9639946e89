#!/usr/bin/env bash
# Reads from a standby (issue #34, CREMA_DATABASE_READ_URL) against the primary alone, under the same mixed load.
#
# One private primary and its streaming hot standby (`crema postgres start --standby-of`), on this machine. Each
# round runs the same load twice, each time on a fresh database with the same seed: once with every read on the
# primary, once with CREMA_DATABASE_READ_URL naming the standby. The load: wrk driving complete order lifecycles
# (bench/lifecycle.lua, the writes) and, at the same time, wrk reading the stores' boards (bench/board_reads.lua),
# each store's board holding its seeded open orders. Reported per run: events/s, board reads/s and their latency,
# and CPU (crema, the primary, the standby) per second of run; for the standby run, where the reads were served
# (crema_db_standby_reads_total by served_by).
#
# The two sides do the same work, checked: the same scripts, durations and seed, no non-2xx answer on either side,
# every seeded order on the last board read of both runs, and the standby run must have served reads from the
# standby (else it measured the primary twice; its share is printed, standby_share).
#
# Usage: bench/read-replica.sh [-c WRITERS] [-C READERS] [-d SECONDS] [-n SEEDED_PER_STORE] [-r ROUNDS]
#   defaults: -c 8 -C 8 -d 20 -n 40 -r 1; 8 stores; -c 0: reads only (what a read costs each server, without writes).
#   Results in bench/results/read-replica-<time>/.
# Needs: wrk, postgresql (pg_basebackup), curl, python3, a release crema (CREMA_BIN or .build-release).
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh

writers=8 readers=8 duration=20 seeded=40 rounds=1 stores=8
while getopts "c:C:d:n:r:h" opt; do
  case "$opt" in
    c) writers=$OPTARG ;; C) readers=$OPTARG ;; d) duration=$OPTARG ;; n) seeded=$OPTARG ;; r) rounds=$OPTARG ;;
    *) sed -n '2,20p' "$0"; exit 2 ;;
  esac
done
command -v wrk > /dev/null || { echo "wrk is missing: apt-get install -y wrk" >&2; exit 1; }
CREMA=$(crema_bin)
DASHBOARD_KEY=bench-dashboard-key-0123

bench_workspace read-replica
standby=$cluster-standby
replica_cleanup() {
  "$CREMA" postgres stop --dir "$standby" > /dev/null 2>&1 || true
  rm -rf "$standby"
  bench_cleanup
}
trap replica_cleanup EXIT

log "machine: $(nproc) cores; crema $CREMA; commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
primary_info=$(start_cluster "$cluster" postgres "$out/postgres.log")
"$CREMA" postgres start --dir "$standby" --database postgres --standby-of "$cluster" >> "$out/postgres.log" 2>&1
standby_info=$("$CREMA" postgres status --dir "$standby" --database postgres)
log "primary: $primary_info"
log "standby: $standby_info (in recovery: $(psql "$standby_info" -XAtc 'SELECT pg_is_in_recovery()'))"

# seed PORT: SEEDED placed (open) orders in each store, so every board read has rows to join and project.
seed() {
  local eta
  eta=$(date -u -d '+50 minutes' +%Y-%m-%dT%H:%M:%SZ)
  for s in $(seq 1 "$stores"); do for i in $(seq 1 "$seeded"); do echo "s$s $i"; done; done |
    xargs -P 4 -n 2 sh -c 'curl -s -o /dev/null -w "%{http_code}\n" -X POST "http://127.0.0.1:'"$1"'/v1/orders" \
      -H "Authorization: Bearer '"$BENCH_POS_KEY"'" -H "Content-Type: application/json" -H "Idempotency-Key: seed-$0-$1" \
      -d "{\"store_id\":\"$0\",\"pos_ref\":\"S-$0-$1\",\"customer_ref\":\"seed-$0-$1\",\"display_name\":\"Ana\",\"locale\":\"en\",\"items\":[{\"name\":\"Latte\",\"quantity\":1}],\"eta\":\"'"$eta"'\"}"' |
    sort | uniq -c | awk '$2 != 201 { bad = 1 } END { exit bad }' || { echo "seeding failed" >&2; return 1; }
}

# run MODE ROUND: one run on a fresh database; MODE is primary or standby.
run() {
  local mode=$1 round=$2 db="r${2}_$1" port=$((18600 + RANDOM % 1000)) conninfo read_url="" dir="$out/$1-$2"
  mkdir -p "$dir"
  conninfo=$(new_database "$primary_info" "$db")
  [ "$mode" = standby ] && read_url="$standby_info dbname=$db"
  CREMA_DATABASE_READ_URL="$read_url" start_serve "$conninfo" "$port" 16 "$dir/serve.log"
  wait_ready "$port" 60
  create_stores "$port" "$stores"
  seed "$port"
  # The standby has the seed (its database too) before the clock starts: both runs start from the same state.
  local lsn
  lsn=$(psql "$conninfo" -XAtc 'SELECT pg_current_wal_lsn()')
  psql "$standby_info dbname=$db" -XAtq -c "SET statement_timeout = '60s'" \
    -c "DO \$\$BEGIN WHILE NOT coalesce(pg_last_wal_replay_lsn() >= '$lsn'::pg_lsn, false) LOOP PERFORM pg_sleep(0.01); END LOOP; END\$\$"
  local p0 s0 c0 p1 s1 c1
  p0=$(cluster_ticks "$cluster"); s0=$(cluster_ticks "$standby"); c0=$(ticks_of "$SERVE_PID")
  local writes_pid=""
  if [ "$writers" -gt 0 ]; then
    POS_KEY=$BENCH_POS_KEY BARISTA_KEY=$BENCH_BARISTA_KEY RUN_ID="$db" STORES=$stores \
      timeout $((duration + 30)) wrk -t 1 -c "$writers" -d "${duration}s" -s bench/lifecycle.lua "http://127.0.0.1:$port" > "$dir/writes.txt" 2>&1 &
    writes_pid=$!
  else
    printf 'events_per_s 0\nnon2xx 0\n' > "$dir/writes.txt"
  fi
  DASHBOARD_KEY=$DASHBOARD_KEY STORES=$stores \
    timeout $((duration + 30)) wrk -t 1 -c "$readers" -d "${duration}s" -s bench/board_reads.lua "http://127.0.0.1:$port" > "$dir/reads.txt" 2>&1
  [ -z "$writes_pid" ] || wait "$writes_pid"
  p1=$(cluster_ticks "$cluster"); s1=$(cluster_ticks "$standby"); c1=$(ticks_of "$SERVE_PID")
  curl -s "http://127.0.0.1:$port/metrics" | grep '^crema_db_standby_reads_total' > "$dir/served_by.txt" || true
  # Every seeded order is on the last board read (the seed is never advanced by the lifecycles, which place their own).
  local shown
  shown=$(curl -s -H "Authorization: Bearer $DASHBOARD_KEY" "http://127.0.0.1:$port/v1/stores/s1/board" |
    python3 -c 'import json,sys; b=json.load(sys.stdin); print(sum(1 for o in b["columns"].get("queued", []) if o["pos_ref"].startswith("S-")))')
  stop_pid "$SERVE_PID"; SERVE_PID=""
  local events reads p50 p99 bad_w bad_r
  events=$(awk '/^events_per_s/ { print $2 }' "$dir/writes.txt")
  bad_w=$(awk '/^non2xx/ { print $2 }' "$dir/writes.txt")
  reads=$(awk '/^reads_per_s/ { print $2 }' "$dir/reads.txt")
  p50=$(awk '/^read_p50_ms/ { print $2 }' "$dir/reads.txt"); p99=$(awk '/^read_p99_ms/ { print $2 }' "$dir/reads.txt")
  bad_r=$(awk '/^read_non2xx/ { print $2 }' "$dir/reads.txt")
  local standby_served all_served share sock_w sock_r
  standby_served=$(awk '/served_by="standby"/ { print $2 }' "$dir/served_by.txt")
  all_served=$(awk '{ n += $2 } END { print n + 0 }' "$dir/served_by.txt")
  share=$( [ "$all_served" -gt 0 ] && echo "$(( 100 * ${standby_served:-0} / all_served ))%" || echo "-")
  sock_w=$(awk '/^socket_errors/ { split($0, a, /[= ]/); print a[3] + a[5] + a[7] + a[9] }' "$dir/writes.txt"); sock_w=${sock_w:-0}
  sock_r=$(awk '/^read_socket_errors/ { print $2 }' "$dir/reads.txt")
  # CPU in cores (CPU seconds per second of run), and in ms per request (events and reads together).
  local requests
  requests=$(echo "($events + $reads) * $duration" | bc -l)
  printf 'run: mode=%s round=%s events_per_s=%s reads_per_s=%s read_p50_ms=%s read_p99_ms=%s crema_cpu=%.2f primary_cpu=%.2f standby_cpu=%.2f primary_ms_per_request=%.3f standby_ms_per_request=%.3f non2xx=%s/%s socket_errors=%s/%s seeded_on_board=%s/%s standby_share=%s served_by=%s\n' \
    "$mode" "$round" "$events" "$reads" "$p50" "$p99" "$(echo "($c1 - $c0) / 100 / $duration" | bc -l)" \
    "$(echo "($p1 - $p0) / 100 / $duration" | bc -l)" "$(echo "($s1 - $s0) / 100 / $duration" | bc -l)" \
    "$(echo "($p1 - $p0) * 10 / $requests" | bc -l)" "$(echo "($s1 - $s0) * 10 / $requests" | bc -l)" \
    "${bad_w:-?}" "${bad_r:-?}" "$sock_w" "${sock_r:-?}" "$shown" "$seeded" "$share" "$(tr '\n' ' ' < "$dir/served_by.txt" | sed 's/crema_db_standby_reads_total//g; s/ $//')" | tee -a "$out/run.log"
  # Like with like: no refusals on either side, the whole seed on the board, and the standby run served by the standby.
  [ "${bad_w:-1}" = 0 ] && [ "${bad_r:-1}" = 0 ] || { log "INVALID: non-2xx answers ($mode)"; return 1; }
  [ "$sock_w" = 0 ] && [ "${sock_r:-1}" = 0 ] || { log "INVALID: socket errors ($mode)"; return 1; }
  [ "$shown" = "$seeded" ] || { log "INVALID: the board of s1 showed $shown of $seeded seeded orders ($mode)"; return 1; }
  if [ "$mode" = standby ]; then
    [ "${standby_served:-0}" -gt 0 ] || { log "INVALID: no read was served by the standby"; return 1; }
  fi
}

# Alternating which side goes first, since the cluster grows by a database per run.
for round in $(seq 1 "$rounds"); do
  if [ $((round % 2)) = 1 ]; then run primary "$round"; run standby "$round"; else run standby "$round"; run primary "$round"; fi
done
log "results in $out"
