#!/usr/bin/env python3
"""Reads what the APNs simulator recorded (GET /sim/requests, saved to a file) for the delivery benchmarks.
Standard library only.

  sim-summary RECORDS              counts by status, distinct tokens, first/last receivedAt, span (JSON)
  latency RECORDS OUTBOX_CSV       per push: receivedAt - created_at, joined on apns-id (JSON percentiles)
  drill RECORDS TOKENS_FILE        every expected token accepted at least once? duplicates? (JSON)
  histogram BEFORE AFTER NAME      a Prometheus histogram's growth between two /metrics scrapes: count and, per
                                   percentile, the bucket bound it falls under (JSON)
"""
import csv
import json
import sys
from datetime import datetime


def parse_time(text):
    """ISO 8601 as Foundation writes it (Z or offset, with or without fractional seconds); also epoch numbers."""
    if isinstance(text, (int, float)):
        return float(text)
    t = text.strip().replace("Z", "+00:00")
    if "." in t:  # Python < 3.11 accepts at most 6 fractional digits
        head, rest = t.split(".", 1)
        digits = "".join(c for c in rest if c.isdigit())
        tail = rest[len(digits):]
        t = f"{head}.{(digits + '000000')[:6]}{tail}"
    return datetime.fromisoformat(t).timestamp()


def load(path):
    records = json.load(open(path))
    for r in records:
        r["_t"] = parse_time(r["receivedAt"])
    return records


def resolution(records):
    """'sub-second' when any receivedAt carries a fraction, else 'seconds'."""
    return "sub-second" if any(r["_t"] != int(r["_t"]) for r in records) else "seconds"


def percentile(values, p):
    if not values:
        return None
    values = sorted(values)
    k = max(0, min(len(values) - 1, int(round(p / 100 * len(values) + 0.5)) - 1))
    return values[k]


def sim_summary(path):
    records = load(path)
    ok = [r for r in records if r["status"] == 200]
    statuses = {}
    for r in records:
        key = str(r["status"]) + (" " + r["reason"] if r.get("reason") else "")
        statuses[key] = statuses.get(key, 0) + 1
    times = sorted(r["_t"] for r in ok)
    span = times[-1] - times[0] if len(times) > 1 else None
    return {"records": len(records), "accepted": len(ok), "statuses": statuses,
            "distinct_tokens": len({r["deviceToken"] for r in ok}), "first": times[0] if times else None,
            "last": times[-1] if times else None, "span_s": span,
            "per_s": (len(ok) - 1) / span if span else None, "resolution": resolution(records),
            "connections": len({r.get("connectionID") for r in ok}),
            "http_versions": sorted({r.get("httpVersion") for r in ok if r.get("httpVersion")})}


def latency(records_path, outbox_path):
    """OUTBOX_CSV: apns_id, created_at, sent_at[, commit time] as epoch seconds (psql COPY ... CSV)."""
    records = load(records_path)
    by_id = {}
    for r in records:
        if r["status"] == 200:
            by_id.setdefault(r["apnsID"].lower(), r["_t"])
    series = {k: [] for k in ("created_to_simulator_ms", "created_to_recorded_ms", "commit_to_simulator_ms",
                              "commit_to_recorded_ms", "transaction_ms")}
    missing = 0
    for row in csv.reader(open(outbox_path)):
        apns_id, created, sent = row[0], float(row[1]), row[2]
        commit = float(row[3]) if len(row) > 3 and row[3] else None
        t = by_id.get(apns_id.lower())
        if t is None:
            missing += 1
        else:
            series["created_to_simulator_ms"].append((t - created) * 1000)
            if commit is not None:
                series["commit_to_simulator_ms"].append((t - commit) * 1000)
        if sent:
            series["created_to_recorded_ms"].append((float(sent) - created) * 1000)
            if commit is not None:
                series["commit_to_recorded_ms"].append((float(sent) - commit) * 1000)
        if commit is not None:
            series["transaction_ms"].append((commit - created) * 1000)

    def stats(values):
        return {"n": len(values), **{f"p{p}": percentile(values, p) for p in (50, 90, 99)},
                "max": max(values) if values else None, "mean": sum(values) / len(values) if values else None}

    return {**{k: stats(v) for k, v in series.items()}, "outbox_rows_without_accepted_record": missing,
            "resolution": resolution(records)}


def drill(records_path, tokens_path):
    records = load(records_path)
    expected = [line.strip() for line in open(tokens_path) if line.strip()]
    accepted = {}
    for r in records:
        if r["status"] == 200:
            accepted[r["deviceToken"]] = accepted.get(r["deviceToken"], 0) + 1
    lost = [t for t in expected if t not in accepted]
    duplicated = {t: n for t, n in accepted.items() if n > 1}
    return {"expected_tokens": len(expected), "accepted_records": sum(accepted.values()),
            "tokens_accepted": len([t for t in expected if t in accepted]), "lost": len(lost),
            "lost_sample": [t[:8] + "…" for t in lost[:5]], "tokens_sent_twice_or_more": len(duplicated),
            "extra_sends": sum(n - 1 for n in duplicated.values()),
            "refused": sum(1 for r in records if r["status"] != 200)}


def histogram(before_path, after_path, name):
    import re
    def buckets(path):
        found = {}
        try:
            text = open(path).read()
        except OSError:
            return found
        for line in text.splitlines():
            m = re.match(re.escape(name) + r'_bucket\{(.*)\} ([0-9.e+-]+)$', line)
            if m:
                le = re.search(r'le="([^"]+)"', m.group(1)).group(1)
                found[le] = found.get(le, 0) + float(m.group(2))  # summed over other labels (push types)
        return found
    a, b = buckets(before_path), buckets(after_path)
    rows = sorted(((float("inf") if le == "+Inf" else float(le)), b[le] - a.get(le, 0)) for le in b)
    total = rows[-1][1] if rows else 0
    def bound(p):
        for le, cumulative in rows:
            if total and cumulative >= p / 100 * total:
                return le
        return None
    return {"count": total, **{f"p{p}_at_most_s": bound(p) for p in (50, 90, 99)},
            "buckets": [[le, c] for le, c in rows]}


if __name__ == "__main__":
    command, *rest = sys.argv[1:]
    result = {"sim-summary": sim_summary, "latency": latency, "drill": drill, "histogram": histogram}[command](*rest)
    print(json.dumps(result, sort_keys=True))
