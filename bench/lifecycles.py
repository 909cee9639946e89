#!/usr/bin/env python3
"""A fixed number of complete order lifecycles through crema serve's HTTP API (bench/ingest.sh -i). Stdlib only.

Unlike wrk (bench/lifecycle.lua), which runs for a duration, this sends exactly LIFECYCLES lifecycles (placed ->
started -> ready -> picked_up, the same bodies and roles as lifecycle.lua), over CONNECTIONS keep-alive connections,
one thread each, every order's events one after the other. That fixes the work, so a count taken over it (callgrind's
instructions) can be divided by the events and compared between runs. Every answer must be 2xx with the state the
event leads to; anything else stops the run. Prints one JSON object: events, lifecycles, seconds, failures.
"""
import argparse
import http.client
import json
import sys
import threading
import time
from datetime import datetime, timedelta, timezone

STEPS = [  # (body, role, state the answer must show)
    ('{"type":"started","barista":"Sam"}', "barista", "preparing"),
    ('{"type":"ready"}', "barista", "ready"),
    ('{"type":"picked_up"}', "pos", "picked_up"),
]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--lifecycles", type=int, required=True)
    parser.add_argument("--connections", type=int, default=2)
    parser.add_argument("--stores", type=int, default=8)
    parser.add_argument("--run-id", required=True, help="prefix that keeps Idempotency-Keys and pos_refs unique")
    parser.add_argument("--pos-key", required=True)
    parser.add_argument("--barista-key", required=True)
    parser.add_argument("--timeout", type=float, default=120, help="seconds one request may take (valgrind is slow)")
    args = parser.parse_args()

    eta = (datetime.now(timezone.utc) + timedelta(minutes=10)).strftime("%Y-%m-%dT%H:%M:%SZ")
    auth = {"pos": f"Bearer {args.pos_key}", "barista": f"Bearer {args.barista_key}"}
    lock = threading.Lock()
    counts = {"events": 0, "lifecycles": 0}
    failures = []
    # Lifecycle i goes to thread i % connections: the split is the same in every run.
    def worker(t):
        conn = http.client.HTTPConnection("127.0.0.1", args.port, timeout=args.timeout)
        def post(path, role, key, body, state):
            conn.request("POST", path, body=body, headers={
                "Authorization": auth[role], "Content-Type": "application/json", "Idempotency-Key": key})
            answer = conn.getresponse()
            data = answer.read()
            if not 200 <= answer.status < 300:
                raise RuntimeError(f"{path} answered {answer.status}: {data[:200]!r}")
            order = json.loads(data)
            if order.get("state") != state:
                raise RuntimeError(f"{path} answered state {order.get('state')!r}, expected {state!r}")
            with lock:
                counts["events"] += 1
            return order["id"]
        try:
            for i in range(t, args.lifecycles, args.connections):
                key = f"{args.run_id}-{i}"
                body = json.dumps({"store_id": f"s{i % args.stores + 1}", "pos_ref": f"T-{key}", "customer_ref": f"c-{i}",
                                   "display_name": "Ana", "locale": "en", "items": [{"name": "Latte", "quantity": 1}],
                                   "eta": eta}, separators=(",", ":"))
                order = post("/v1/orders", "pos", f"{key}-0", body, "queued")
                for n, (step, role, state) in enumerate(STEPS, 1):
                    post(f"/v1/orders/{order}/events", role, f"{key}-{n}", step, state)
                with lock:
                    counts["lifecycles"] += 1
        except Exception as error:  # noqa: BLE001 -- any failure stops the run and is reported
            with lock:
                failures.append(f"connection {t}: {error}")
        finally:
            conn.close()

    start = time.monotonic()
    threads = [threading.Thread(target=worker, args=(t,)) for t in range(args.connections)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    print(json.dumps({**counts, "seconds": round(time.monotonic() - start, 3), "failures": failures}))
    sys.exit(1 if failures or counts["lifecycles"] != args.lifecycles else 0)


if __name__ == "__main__":
    main()
