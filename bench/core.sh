#!/usr/bin/env bash
# The pure core per event (issue #35; docs/design.md §8: ≤ 20 µs): the transition, the stored projection and the
# delivery plan, as OrderService and OrderTransaction run them for one event, without I/O, on a 24-event lifecycle
# (en, es-MX, ja-JP; picked up and canceled; push-to-start, alert and activity tokens). bench/core is its own package:
# the main package gains no dependency.
#
# Prints, per run of the ordo-one/benchmark suite: time per event (p0/p50/p99 of one event per iteration, the 24 in
# turn, and of the whole lifecycle divided by 24), allocations and bytes allocated per event; then the spread across
# runs; then instructions per event under callgrind (a count that does not depend on the machine's load: perf's
# counters are not available on every machine) and where they go. Every iteration checks what it produced against the
# fixture's first run, so a run cannot measure less work. Exits non-zero when the benchmark cannot run.
#
# Usage: bench/core.sh [-r RUNS] [-n]
#   -r RUNS  benchmark runs (about 10 s each), default 3
#   -n       no instruction count (callgrind)
# Raw outputs (jmh JSON, logs, callgrind files): bench/results/core-<time>/ (git-ignored).
set -euo pipefail
cd "$(dirname "$0")/.."

runs=3 count=1
while getopts "r:n" opt; do
  case "$opt" in
    r) runs=$OPTARG ;;
    n) count=0 ;;
    *) sed -n '2,17p' "$0" >&2; exit 2 ;;
  esac
done

out=bench/results/core-$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$out"
out=$(cd "$out" && pwd)
load() { cut -d' ' -f1-3 /proc/loadavg; }
commit=$(git rev-parse --short HEAD 2> /dev/null || echo '?')
echo "== $(date -u +%FT%TZ), $(nproc) cores, load average $(load), commit $commit" | tee "$out/machine.txt"

echo "== building bench/core (release)"
swift build -c release --package-path bench/core --product CoreCount > "$out/build.log" 2>&1 || { tail -20 "$out/build.log" >&2; exit 1; }
counter=bench/core/.build/release/CoreCount
# One checked run of the lifecycle: a fixture the core refuses, or a result that changes, stops here.
"$counter" 1 | tee "$out/sanity.txt"
events=$(awk '{print $2}' "$out/sanity.txt")

summarize() {
  python3 - "$@" <<'PY'
import json, sys

mode, events = sys.argv[1], int(sys.argv[2])
rows = []
for path in sys.argv[3:]:
    data = {b["benchmark"].rsplit(".", 1)[-1]: b for b in json.load(open(path))}
    def metric(bench, name):
        m = data[bench]["secondaryMetrics"][name]
        return m["scorePercentiles"], m["score"]
    try:
        ev, _ = metric("event", "Time (wall clock)")
        lc, _ = metric("lifecycle-24-events", "Time (wall clock)")
        _, mallocs = metric("lifecycle-24-events", "Malloc (total)")
        _, mbytes = metric("lifecycle-24-events", "Malloc (bytes total)")
    except KeyError as missing:
        sys.exit(f"{path}: no {missing} in the benchmark's output")
    row = dict(p0=ev["0.0"], p50=ev["50.0"], p99=ev["99.0"], l0=lc["0.0"] / events, l50=lc["50.0"] / events,
               l99=lc["99.0"] / events, mallocs=mallocs / events, bytes=mbytes / events)
    rows.append(row)
    if mode == "runs":
        print(f"   one event:  p0 {row['p0']:6.1f} µs  p50 {row['p50']:6.1f} µs  p99 {row['p99']:7.1f} µs   "
          f"lifecycle/{events}: p0 {row['l0']:5.1f}  p50 {row['l50']:5.1f}  p99 {row['l99']:6.1f} µs   "
              f"{row['mallocs']:.1f} allocations, {row['bytes'] / 1024:.1f} KiB per event")
if mode == "runs":
    sys.exit(0)
if len(rows) > 1:
    def spread(key):
        values = [r[key] for r in rows]
        return f"{min(values):.1f}–{max(values):.1f}"
    print(f"== over {len(rows)} runs: one event p50 {spread('p50')} µs, p99 {spread('p99')} µs; "
          f"lifecycle/{events} p50 {spread('l50')} µs; allocations per event {spread('mallocs')}")
best = min(r["p50"] for r in rows)
print(f"== target ≤ 20 µs per event (p50 of one event): {'met' if best <= 20 else 'NOT met'} "
      f"(best p50 {best:.1f} µs; the machine's load inflates time, not the instruction count below)")
PY
}

echo "== ordo-one/benchmark, $runs run(s) (time per event is wall clock: read it with the load average)"
jsons=()
for i in $(seq 1 "$runs"); do
  mkdir -p "$out/run-$i"
  before=$(load)
  if ! swift package --package-path bench/core --allow-writing-to-directory "$out" benchmark --no-progress \
      --format jmh --path "$out/run-$i" > "$out/run-$i.log" 2>&1; then
    tail -30 "$out/run-$i.log" >&2
    echo "the benchmark did not run (log: $out/run-$i.log)" >&2
    exit 1
  fi
  # The plugin exits 0 when a benchmark reported an error (a result that differs from the fixture's): the log says so.
  if grep -q "benchmarks failed" "$out/run-$i.log"; then
    grep -B3 -A3 "benchmarks failed" "$out/run-$i.log" >&2
    echo "a benchmark failed (log: $out/run-$i.log)" >&2
    exit 1
  fi
  [ -s "$out/run-$i/Current_run.jmh.json" ] || { echo "the benchmark wrote no results (log: $out/run-$i.log)" >&2; exit 1; }
  echo "-- run $i (load $before → $(load))"
  summarize runs "$events" "$out/run-$i/Current_run.jmh.json"
  jsons+=("$out/run-$i/Current_run.jmh.json")
done
summarize spread "$events" "${jsons[@]}" | tee "$out/summary.txt"

[ "$count" = 1 ] || exit 0
if ! command -v valgrind > /dev/null; then
  echo "== instructions per event: not measured (valgrind is missing: apt-get install -y valgrind)"
  exit 0
fi
echo "== instructions per event (callgrind)"
# The count repeats to the instruction only when everything the process sees is the same: hashing seeded the same
# (SWIFT_DETERMINISTIC_HASHING), an empty environment, the same working folder and a binary path of the same length
# (they move the stack, and with it a few hundred instructions per event).
scratch=$(mktemp -d /tmp/crema-core.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
snapshot=$scratch/CoreCount
cp "$counter" "$snapshot"
cp "$counter" "$out/CoreCount"
counted() { (cd / && env -i SWIFT_DETERMINISTIC_HASHING=1 "$(command -v valgrind)" --tool=callgrind "$@"); }
instructions() {
  counted --callgrind-out-file="$out/callgrind.$1.out" "$snapshot" "$1" \
    > "$out/callgrind.$1.log" 2>&1 || { tail -5 "$out/callgrind.$1.log" >&2; exit 1; }
  sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$out/callgrind.$1.log"
}
one=$(instructions 1)
eleven=$(instructions 11)
per_event=$(( (eleven - one) / (10 * events) ))
echo "   $one instructions for 1 lifecycle, $eleven for 11: $per_event instructions per event" | tee -a "$out/summary.txt"

# Where they go: the measured loop only (Lifecycle.runChecked), 10 lifecycles, inclusive and self, per event.
counted --toggle-collect='$s12CoreWorkload9LifecycleV10runCheckedSiyF' --callgrind-out-file="$out/callgrind.profile.out" \
  "$snapshot" 10 > "$out/callgrind.profile.log" 2>&1
demangle() { swift demangle --simplified; }
callgrind_annotate --auto=no --inclusive=yes --threshold=100 "$out/callgrind.profile.out" 2> /dev/null | demangle > "$out/callgrind-inclusive.txt"
callgrind_annotate --auto=no --threshold=100 "$out/callgrind.profile.out" 2> /dev/null | demangle > "$out/callgrind-self.txt"
python3 - "$out" $((10 * events)) <<'PY' | tee "$out/profile.txt"
import re, sys

out, events = sys.argv[1], int(sys.argv[2])
line = re.compile(r"^\s*([\d,]+) \([\s\d.]+%\)\s+(\S.*)$")
def entries(name):
    for text in open(f"{out}/{name}"):
        m = line.match(text)
        if m and "PROGRAM TOTALS" not in text:
            yield int(m.group(1).replace(",", "")), m.group(2)
inclusive = list(entries("callgrind-inclusive.txt"))
total = max(ir for ir, _ in inclusive)
print(f"   inclusive, per event (of {total // events:,} in the measured loop; the largest entry of each):")
parts = [
    ("transition: OrderStateMachine.place/apply (with validation)", r"OrderStateMachine\.(place|apply)\("),
    ("stored projection + bodies: OrderProjector.contentState", r"OrderProjector\.contentState\("),
    ("  its texts: Phrase.fit", r"Phrase\.fit\("),
    ("  its texts: DisplayWidth.columns", r"DisplayWidth\.columns<"),
    ("  its context: OrderProjector.context (clean, ETAReading)", r"OrderProjector\.context\("),
    ("every JSONEncoder.encode (projection and bodies)", r"\bJSONEncoder\.encode<A>\("),
    ("delivery plan: DeliveryPlanner.plan", r"DeliveryPlanner\.plan\("),
    ("  Live Activity body: APNsBodyBuilder.liveActivity(push) with fitting", r"APNsBodyBuilder\.liveActivity\(_:(encode:)?\)"),
    ("  its encoding: APNsPayload.encode, or .write and the body's writer", r"APNsPayload\.(encode<A>|write)\(|OrderLiveActivityBody\.encode\(to:"),
    ("TimeZone(identifier:)", r"TimeZone\.init\(identifier:\)"),
]
for label, pattern in parts:
    found = [ir for ir, fn in inclusive if re.search(pattern, fn)]
    value = max(found) if found else 0
    print(f"   {value // events:>9,}  {100 * value / total:5.1f} %  {label}")
print("   self, per event (top 12):")
for ir, fn in list(entries("callgrind-self.txt"))[:12]:
    name = re.sub(r" \[.*", "", fn)[:110]
    print(f"   {ir // events:>9,}  {100 * ir / total:5.1f} %  {name}")
PY
echo "== raw outputs: $out"
