#!/usr/bin/env python3
"""What a failover run lost and how long it took, for drills/failover-drill.sh and drills/citus-failover-drill.sh.
Standard library only.

`result RDIR MODE RESTARTED T_START T_FAIL T_PROMOTED T_HEALTHY T_LOAD_END T_DRAINED BEFORE AFTER LOST_EVENTS RESULTS`:
reads the run's folder (outcomes.jsonl, journal.jsonl, probe.jsonl and sim-requests.json, and db.json written by
failover_lib.sh's collect_run; ../received.jsonl, the webhook receiver's log), writes RDIR/result.json, appends it to
RESULTS and prints it, then the verdict lines ending with
  LABEL: mode=M lost_events=0 lost_pushes=0 duplicate_pushes=N lost_webhooks=0 refused_s=S restarted=no max_push_delay_s=S
Exits 1 on any loss, a retried command with other than one effect, an order placed twice, or a crema process that
died. --extra KEY=VALUE adds a field (a number when it reads as one) to the result and to that last line;
--tenant NAME=OUTCOMES prints that tenant's refusals and slowest answer from its own client's outcomes.

`summary RESULTS [--cols C,...]`: a Markdown table of the runs, with min, median and max.
"""
import argparse
import json
import statistics
import sys
from datetime import datetime

COLS = ["refused_s", "promoted_s", "formation_back_s", "writes_back_s", "crema_lag_s", "healthy_s", "dispatch_gap_s",
        "dispatch_after_writes_s", "max_push_delay_s", "acknowledged", "retried", "planned_pushes", "duplicate_pushes",
        "webhooks"]


def refusals(outcomes):
    """The answers 5xx or none, and the seconds from the first of them to the end of the last."""
    refused = [o for o in outcomes if o["status"] == 0 or o["status"] >= 500]
    seconds = (max(o["t"] + o["latency_ms"] / 1000 for o in refused) - refused[0]["t"]) if refused else 0.0
    return refused, seconds


def outcomes_of(path):
    return sorted((json.loads(l) for l in open(path)), key=lambda o: o["t"])


def value(text):
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            return text


def result(args):
    rdir = args.rdir
    t_start, t_fail, t_promoted, t_healthy, t_load_end, t_drained = (
        args.t_start, args.t_fail, args.t_promoted, args.t_healthy, args.t_load_end, args.t_drained)
    outcomes = sorted((json.loads(l) for l in open(f"{rdir}/outcomes.jsonl")), key=lambda o: o["t"])
    db = json.load(open(f"{rdir}/db.json"))
    journal = [json.loads(l) for l in open(f"{rdir}/journal.jsonl")]
    refused, refused_s = refusals(outcomes)
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
    r = {
        "mode": args.mode, "primary_before": args.before, "primary_after": args.after, "acknowledged": len(journal),
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
        "drain_s": round(t_drained - t_load_end, 2), "restarted": args.restarted, "max_push_delay_s": round(max_push_delay_s, 2),
    }
    extra = dict(e.split("=", 1) for e in args.extra)
    r.update({k: value(v) for k, v in extra.items()})
    tenants = {}
    for spec in args.tenant:
        name, path = spec.split("=", 1)
        mine, seconds = refusals(outcomes_of(path))
        slowest = max((o["latency_ms"] for o in outcomes_of(path)), default=0.0)
        tenants[name] = {"refused": len(mine), "refused_s": round(seconds, 2), "slowest_ms": round(slowest)}
    if tenants:
        r["tenants"] = tenants
    r["lost_events"] = int(args.lost_events) if args.lost_events.isdigit() else -1
    json.dump(r, open(f"{rdir}/result.json", "w"))
    open(args.results, "a").write(json.dumps(r) + "\n")
    print(json.dumps(r))
    print(f"commands whose first attempt got no answer or a 5xx, acknowledged in the end: {r['retried']}, with exactly one effect: "
          f"{r['retried_one_effect']}; duplicate orders: {r['duplicate_orders']}")
    print(f"refusals: {r['refused']} answers {r['refused_by']} over {r['refused_s']} s; new primary {r['promoted_s']} s, "
          f"writes back {r['writes_back_s']} s (a direct psql probe: {r['formation_back_s']} s, so Crema's own part {r['crema_lag_s']} s), formation healthy {r['healthy_s']} s after the failover began")
    for name, t in tenants.items():
        print(f"tenant {name}: {t['refused']} answers refused over {t['refused_s']} s; slowest answer {t['slowest_ms']} ms")
    print(f"dispatcher: longest pause {r['dispatch_gap_s']} s, first send {r['dispatch_after_writes_s']} s after writes came back; "
          f"pushes planned {r['planned_pushes']} (superseded {r['superseded']}), webhooks {r['webhooks']}; drained {r['drain_s']} s after the load")
    print(f"{args.label}: mode={r['mode']}" + "".join(f" {k}={r[k]}" for k in extra)
          + f" lost_events={r['lost_events']} lost_pushes={r['lost_pushes']} duplicate_pushes={r['duplicate_pushes']} "
          f"lost_webhooks={r['lost_webhooks']} refused_s={r['refused_s']} restarted={r['restarted']} max_push_delay_s={r['max_push_delay_s']}")
    bad = (r["lost_events"] != 0 or r["lost_pushes"] or r["lost_webhooks"] or r["restarted"] != "no"
           or r["retried_one_effect"] != r["retried"] or r["duplicate_orders"])
    return 1 if bad else 0


def summary(args):
    rows = [json.loads(l) for l in open(args.results)]
    cols = COLS + [c for c in args.cols.split(",") if c]
    print("| run | " + " | ".join(cols) + " | lost events/pushes/webhooks | restarted |")
    print("|---" * (len(cols) + 3) + "|")
    for i, r in enumerate(rows, 1):
        print(f"| {i} | " + " | ".join(str(r.get(c)) for c in cols) + f" | {r['lost_events']}/{r['lost_pushes']}/{r['lost_webhooks']} | {r['restarted']} |")
    for name, f in (("min", min), ("median", statistics.median), ("max", max)):
        vals = []
        for c in cols:
            xs = [r[c] for r in rows if isinstance(r.get(c), (int, float))]
            vals.append(f"{f(xs):g}" if xs else "-")
        print(f"| {name} | " + " | ".join(vals) + " | | |")
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("result")
    for name in ("rdir", "mode", "restarted"):
        r.add_argument(name)
    for name in ("t_start", "t_fail", "t_promoted", "t_healthy", "t_load_end", "t_drained"):
        r.add_argument(name, type=float)
    for name in ("before", "after", "lost_events", "results"):
        r.add_argument(name)
    r.add_argument("--label", default="failover")
    r.add_argument("--extra", action="append", default=[])
    r.add_argument("--tenant", action="append", default=[])
    s = sub.add_parser("summary")
    s.add_argument("results")
    s.add_argument("--cols", default="")
    args = p.parse_args()
    sys.exit({"result": result, "summary": summary}[args.command](args))


if __name__ == "__main__":
    main()
