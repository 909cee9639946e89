#!/usr/bin/env python3
"""Complete order lifecycles (placed, started, ready, picked_up) through Crema's HTTP API, for bench/citus-cpu.sh.

Usage: citus_lifecycles.py BASE_URL LIFECYCLES CONCURRENCY TAG   (stdlib only; exits 1 on any non-2xx answer)
Each client thread keeps one connection, puts its store (s<n>) once, then walks its share of the lifecycles; TAG keeps
the Idempotency-Keys of one run apart from another's.
"""
import http.client, json, sys, threading, urllib.parse, uuid
from datetime import datetime, timedelta, timezone

base, lifecycles, concurrency, tag = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
POS, BARISTA = "pos-key-for-citus-bench-01", "barista-key-for-citus-bench"
url = urllib.parse.urlparse(base)
failures = []

def client(n, count):
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
    def call(method, path, key, body, idem=None):
        headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
        if idem: headers["Idempotency-Key"] = idem
        conn.request(method, path, json.dumps(body), headers)
        answer = conn.getresponse(); data = answer.read()
        if answer.status // 100 != 2: failures.append(f"{method} {path}: {answer.status} {data[:200]!r}")
        return json.loads(data) if data else {}
    store = f"s{n}"
    call("PUT", f"/v1/stores/{store}", POS, {"name": f"Store {n}", "timezone": "UTC"})
    eta = (datetime.now(timezone.utc) + timedelta(minutes=10)).strftime("%Y-%m-%dT%H:%M:%SZ")
    for i in range(count):
        key = f"{tag}-{n}-{i}-{uuid.uuid4().hex[:8]}"
        order = call("POST", "/v1/orders", POS, {"store_id": store, "pos_ref": key, "customer_ref": f"c-{n}-{i}", "display_name": "Ana",
                                                 "locale": "en", "items": [{"name": "Flat white", "quantity": 1}], "eta": eta}, key)
        if "id" not in order: return
        for step, event in enumerate([{"type": "started", "barista": "Sam"}, {"type": "ready", "pickup_point": "counter"}, {"type": "picked_up"}]):
            call("POST", f"/v1/orders/{order['id']}/events", BARISTA, event, f"{key}-{step}")

threads = [threading.Thread(target=client, args=(n, lifecycles // concurrency + (1 if n < lifecycles % concurrency else 0)))
           for n in range(concurrency)]
for t in threads: t.start()
for t in threads: t.join()
if failures:
    print(f"{len(failures)} failed requests, the first: {failures[0]}", file=sys.stderr); sys.exit(1)
