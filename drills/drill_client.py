#!/usr/bin/env python3
"""Load client for the reliability drills (drills/kill-drill.sh, drills/pg-restart-drill.sh). Standard library only.

`load` mode: THREADS threads each drive order lifecycles (placed -> started -> ready -> picked_up) against
crema serve on 127.0.0.1 for at most DURATION seconds. Every answer is appended to OUTCOMES (one JSON line:
time, latency, status, Retry-After, error), and every 2xx answer also to JOURNAL (order id, event type, the
version from the answer body, the request's key/path/role/body and a hash of the answer) -- the record of
what Crema acknowledged. A request that gets no answer (connection refused or reset: crema is down) or a
5xx is retried with the same Idempotency-Key and body after a short pause, so a request whose transaction
committed just before the crash comes back as a replay; after MAX_TRIES the lifecycle is abandoned.

`replay` mode: re-sends up to COUNT journaled requests acknowledged before time BEFORE (epoch seconds) with
their original Idempotency-Key and body, and checks each answer is the stored first answer: same status,
`Idempotent-Replayed: true`, byte-identical body. Exits 1 on any mismatch.
"""
import argparse
import hashlib
import http.client
import json
import random
import sys
import threading
import time

EVENTS = [  # (event type, role, body)
    ("started", "barista", '{"type":"started","barista":"Sam"}'),
    ("ready", "barista", '{"type":"ready"}'),
    ("picked_up", "pos", '{"type":"picked_up"}'),
]


class Client:
    def __init__(self, port, keys):
        self.port = port
        self.keys = keys
        self.conn = None

    def post(self, path, role, key, body, timeout=10):
        """Returns (status, headers, body text) or raises OSError/HTTPException when there is no answer."""
        if self.conn is None:
            self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            self.conn.request("POST", path, body=body.encode(), headers={
                "Authorization": "Bearer " + self.keys[role], "Content-Type": "application/json",
                "Idempotency-Key": key})
            response = self.conn.getresponse()
            text = response.read().decode()
            return response.status, response, text
        except Exception:
            self.conn.close()
            self.conn = None
            raise


class Recorder:
    def __init__(self, journal, outcomes):
        self.lock = threading.Lock()
        self.journal = open(journal, "a", buffering=1)
        self.outcomes = open(outcomes, "a", buffering=1)
        self.counts = {"acknowledged": 0, "no_answer": 0, "retried_replayed": 0, "abandoned": 0}
        self.statuses = {}

    def outcome(self, **fields):
        with self.lock:
            self.outcomes.write(json.dumps(fields) + "\n")
            self.statuses[str(fields["status"])] = self.statuses.get(str(fields["status"]), 0) + 1

    def ack(self, **fields):
        with self.lock:
            self.journal.write(json.dumps(fields) + "\n")
            self.counts["acknowledged"] += 1

    def count(self, name):
        with self.lock:
            self.counts[name] += 1


def send(client, recorder, path, role, key, body, deadline, max_tries, retry_pause):
    """Sends one command, retrying with the same key on no answer or 5xx. Returns (status, text, replayed)."""
    for attempt in range(1, max_tries + 1):
        started = time.time()
        status, retry_after, error, replayed, text = None, None, None, False, ""
        try:
            status, response, text = client.post(path, role, key, body)
            retry_after = response.getheader("Retry-After")
            replayed = response.getheader("Idempotent-Replayed") == "true"
        except Exception as e:  # no answer: crema is down or the connection broke mid-request
            error = type(e).__name__
        recorder.outcome(t=started, latency_ms=round((time.time() - started) * 1000, 3), status=status or 0,
                         retry_after=retry_after, error=error, path=path.split("/")[-1], attempt=attempt)
        if status is not None and status < 500:
            if attempt > 1 and replayed:
                recorder.count("retried_replayed")
            return status, text, replayed
        if status is None:
            recorder.count("no_answer")
        if time.time() + retry_pause > deadline:
            break
        time.sleep(retry_pause)
    recorder.count("abandoned")
    return None, "", False


def worker(tid, args, recorder, stop_at, stores):
    client = Client(args.port, {"pos": args.pos_key, "barista": args.barista_key})
    eta = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 1800))
    n = 0
    while time.time() < stop_at:
        n += 1
        store = stores[(tid + n) % len(stores)]
        key = f"{args.run_id}-t{tid}-{n}-placed"
        body = json.dumps({"store_id": store, "pos_ref": f"T-{tid}-{n}", "customer_ref": f"c-{tid}-{n}",
                           "display_name": "Ana", "locale": "en", "items": [{"name": "Latte", "quantity": 1}],
                           "eta": eta}, separators=(",", ":"))
        status, text, replayed = send(client, recorder, "/v1/orders", "pos", key, body, stop_at,
                                      args.max_tries, args.retry_pause)
        if status is None or not 200 <= status < 300:
            continue
        answer = json.loads(text)
        order_id = answer["id"]
        recorder.ack(t=time.time(), order_id=order_id, event_type="placed", version=answer["version"], key=key,
                     role="pos", path="/v1/orders", body=body, status=status, replayed=replayed,
                     answer_sha256=hashlib.sha256(text.encode()).hexdigest())
        for event, role, event_body in EVENTS:
            if time.time() >= stop_at:
                break
            path = f"/v1/orders/{order_id}/events"
            key = f"{args.run_id}-t{tid}-{n}-{event}"
            status, text, replayed = send(client, recorder, path, role, key, event_body, stop_at,
                                          args.max_tries, args.retry_pause)
            if status is None or not 200 <= status < 300:
                break
            answer = json.loads(text)
            recorder.ack(t=time.time(), order_id=order_id, event_type=event, version=answer["version"], key=key,
                         role=role, path=path, body=event_body, status=status, replayed=replayed,
                         answer_sha256=hashlib.sha256(text.encode()).hexdigest())


def load(args):
    recorder = Recorder(args.journal, args.outcomes)
    stop_at = time.time() + args.duration
    stores = [f"s{i}" for i in range(1, args.stores + 1)]
    threads = [threading.Thread(target=worker, args=(t, args, recorder, stop_at, stores), daemon=True)
               for t in range(1, args.threads + 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=max(0.0, stop_at - time.time()) + 30)
    summary = dict(recorder.counts, statuses=recorder.statuses, stuck_threads=sum(t.is_alive() for t in threads))
    print(json.dumps(summary))
    return 0 if summary["stuck_threads"] == 0 else 1


def replay(args):
    entries = [json.loads(line) for line in open(args.journal)]
    chosen = [e for e in entries if e["t"] < args.before]
    random.Random(1).shuffle(chosen)
    chosen = chosen[:args.count]
    if not chosen:
        print("replay: no acknowledged request before the given time", file=sys.stderr)
        return 1
    client = Client(args.port, {"pos": args.pos_key, "barista": args.barista_key})
    failures = 0
    for e in chosen:
        status, response, text = client.post(e["path"], e["role"], e["key"], e["body"])
        replayed = response.getheader("Idempotent-Replayed") == "true"
        same = hashlib.sha256(text.encode()).hexdigest() == e["answer_sha256"]
        ok = status == e["status"] and replayed and same
        failures += not ok
        print(f"replay {e['event_type']:9} {e['order_id']} key={e['key']}: status {status} "
              f"Idempotent-Replayed={'true' if replayed else 'missing'} body {'identical' if same else 'DIFFERENT'}"
              f" -> {'ok' if ok else 'FAIL'}")
    return 1 if failures else 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("mode", choices=["load", "replay"])
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--pos-key", required=True)
    p.add_argument("--barista-key", required=True)
    p.add_argument("--journal", required=True)
    p.add_argument("--outcomes", default="/dev/null")
    p.add_argument("--threads", type=int, default=8)
    p.add_argument("--duration", type=float, default=15)
    p.add_argument("--stores", type=int, default=8)
    p.add_argument("--run-id", default=str(int(time.time())))
    p.add_argument("--max-tries", type=int, default=400)
    p.add_argument("--retry-pause", type=float, default=0.05)
    p.add_argument("--before", type=float, default=float("inf"))
    p.add_argument("--count", type=int, default=5)
    args = p.parse_args()
    sys.exit(load(args) if args.mode == "load" else replay(args))


if __name__ == "__main__":
    main()
