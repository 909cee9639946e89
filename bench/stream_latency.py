"""Commit-to-screen latency of GET /v1/stream, issue #6's "within 100 ms of its commit".

Three stream clients on one store, as in the issue: two "browsers" (each opens the stream with a single-use
ticket, as the board page does) and one "curl -N" (the dashboard key in the Authorization header). The
script then applies N events one after another and, for each, records when every client received it.

Commit time is bracketed: the event's transaction committed after the POST was sent and before its answer
arrived. The script reports latency from the *send* of the POST (an upper bound of commit-to-receive) and
from the *answer* (a lower bound), per client, as p50 / p99 / max.

Usage: python3 bench/stream_latency.py http://127.0.0.1:PORT POS_KEY BARISTA_KEY DASHBOARD_KEY [N]
"""
import json, statistics, sys, threading, time, urllib.request, uuid

base, pos, barista, dashboard = sys.argv[1:5]
n = int(sys.argv[5]) if len(sys.argv) > 5 else 40
store = "latency-" + uuid.uuid4().hex[:8]


def call(method, path, key, body=None, headers=None):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(base + path, data=data, method=method)
    request.add_header("Authorization", "Bearer " + key)
    request.add_header("Content-Type", "application/json")
    for name, value in (headers or {}).items():
        request.add_header(name, value)
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read() or b"{}")


received = {}  # (client, order id, version) -> monotonic time
lock = threading.Lock()


def listen(name, url, key=None):
    request = urllib.request.Request(url)
    if key:
        request.add_header("Authorization", "Bearer " + key)
    with urllib.request.urlopen(request, timeout=120) as response:
        for raw in response:
            line = raw.decode().rstrip("\n")
            if line.startswith("data:"):
                order = json.loads(line[5:])
                with lock:
                    received.setdefault((name, order["id"], order["version"]), time.monotonic())


call("PUT", f"/v1/stores/{store}", pos, {"name": "Latency", "timezone": "UTC"})
clients = ["browser-1", "browser-2", "curl"]
for name in clients[:2]:
    ticket = call("POST", "/v1/stream/tickets", dashboard, {"store_id": store})["ticket"]
    threading.Thread(target=listen, args=(name, f"{base}/v1/stream?store={store}&ticket={ticket}"), daemon=True).start()
threading.Thread(target=listen, args=("curl", f"{base}/v1/stream?store={store}", dashboard), daemon=True).start()
time.sleep(1.0)  # let the three streams open

sent = []  # (order id, version, send time, answer time)
for i in range(n):
    eta = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 600))
    body = {"store_id": store, "pos_ref": f"L-{i}", "display_name": "Ana", "locale": "en",
            "items": [{"name": "Latte", "quantity": 1}], "eta": eta}
    start = time.monotonic()
    order = call("POST", "/v1/orders", pos, body, {"Idempotency-Key": uuid.uuid4().hex})
    sent.append((order["id"], 1, start, time.monotonic()))
    time.sleep(0.05)
    start = time.monotonic()
    order = call("POST", f"/v1/orders/{order['id']}/events", barista, {"type": "started", "barista": "Sam"},
                 {"Idempotency-Key": uuid.uuid4().hex})
    sent.append((order["id"], 2, start, time.monotonic()))
    time.sleep(0.05)

deadline = time.monotonic() + 10
while time.monotonic() < deadline and len(received) < len(sent) * len(clients):
    time.sleep(0.05)

def pct(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]

missing = 0
print(f"{len(sent)} changes, {len(clients)} clients")
for name in clients:
    upper, lower = [], []
    for order_id, version, start, answered in sent:
        at = received.get((name, order_id, version))
        if at is None:
            missing += 1
            continue
        upper.append((at - start) * 1000)
        lower.append(max(0.0, (at - answered) * 1000))
    if upper:
        print(f"{name:10} from send (upper bound): p50 {pct(upper, .5):6.1f} ms  p99 {pct(upper, .99):6.1f} ms  max {max(upper):6.1f} ms"
              f"   from answer (lower bound): p50 {pct(lower, .5):6.1f} ms  max {max(lower):6.1f} ms")
print(f"missing: {missing}")
sys.exit(1 if missing else 0)
