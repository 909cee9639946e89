#!/usr/bin/env python3
"""Load client for drills/failover-drill.sh. Standard library only; built on drills/drill_client.py's Client and
Recorder (same OUTCOMES and JOURNAL lines, so lib.sh's verify_journal reads the journal as it does the kill drill's).

`probe`: until STOP_FILE exists, every 0.1 s: can a session with target_session_attrs=read-write be opened with
CONNINFO and write (a temporary table, or the statement SQL), with psql? One JSON line per try to OUTCOMES: when the formation itself
took writes again, apart from Crema.

`setup`: registers one push-to-start token for each of CUSTOMERS customers (`fo-c1`...; the token named after
TOKEN_TAG and the customer, so two tenants' customers have tokens of their own) and one webhook endpoint
(`order.changed`) at the receiver; prints the endpoint id.

`load`: THREADS threads replay order lifecycles until STOP_FILE exists (or DURATION seconds passed): `placed` for a
customer of the pool (so it plans a `start`), the order's Live Activity token (so `started`, `ready` and
`picked_up` plan an `update`, an `update` and an `end`), then the three events. Every command carries an
Idempotency-Key; one that gets no answer or a 5xx is sent again with the same key and body after RETRY_PAUSE. Each
command whose first attempt got no answer or a 5xx and that was acknowledged in the end goes to RETRIED (key,
order, event type, what the first attempt got, whether the acknowledgement was a replay): the script checks that
each of them had exactly one effect.
"""
import argparse
import hashlib
import http.client
import json
import os
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from drill_client import EVENTS, Client, Recorder  # noqa: E402


class FailoverClient(Client):
    def put(self, path, role, body, timeout=10):
        """A PUT without Idempotency-Key (token registration is idempotent by itself)."""
        if self.conn is None:
            self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            self.conn.request("PUT", path, body=body.encode(), headers={
                "Authorization": "Bearer " + self.keys[role], "Content-Type": "application/json"})
            response = self.conn.getresponse()
            return response.status, response, response.read().decode()
        except Exception:
            self.conn.close()
            self.conn = None
            raise


def token_for(name):
    return hashlib.sha256(name.encode()).hexdigest()


def send(client, recorder, retried, path, role, key, body, stop, args, put=False):
    """Sends one command until it is answered below 500 (same key and body each time). Returns (status, text, replayed)."""
    first = None
    for attempt in range(1, args.max_tries + 1):
        started = time.time()
        status, retry_after, error, replayed, text = None, None, None, False, ""
        try:
            if put:
                status, response, text = client.put(path, role, body)
            else:
                status, response, text = client.post(path, role, key, body)
            retry_after = response.getheader("Retry-After")
            replayed = response.getheader("Idempotent-Replayed") == "true"
        except Exception as e:  # no answer: the connection broke mid-request, or crema is unreachable
            error = type(e).__name__
        recorder.outcome(t=started, latency_ms=round((time.time() - started) * 1000, 3), status=status or 0,
                         retry_after=retry_after, error=error, path=path.split("/")[-1], attempt=attempt)
        if first is None:
            first = error or status
        if status is not None and status < 500:
            if attempt > 1 and 200 <= status < 300 and not put:
                retried.append({"key": key, "path": path, "first": first, "attempts": attempt, "replayed": replayed})
            return status, text, replayed
        if status is None:
            recorder.count("no_answer")
        if stop():
            break
        time.sleep(args.retry_pause)
    recorder.count("abandoned")
    return None, "", False


def worker(tid, args, recorder, retried, stop):
    client = FailoverClient(args.port, {"pos": args.pos_key, "barista": args.barista_key, "app": args.app_key})
    eta = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 1800))
    n = 0
    while not stop():
        n += 1
        store = f"s{(tid + n) % args.stores + 1}"
        customer = f"fo-c{(tid * 7919 + n) % args.customers + 1}"
        key = f"{args.run_id}-t{tid}-{n}-placed"
        body = json.dumps({"store_id": store, "pos_ref": f"{args.run_id}-{tid}-{n}", "customer_ref": customer,
                           "display_name": "Ana", "locale": "en", "items": [{"name": "Latte", "quantity": 1}],
                           "eta": eta}, separators=(",", ":"))
        mine = []
        status, text, replayed = send(client, recorder, mine, "/v1/orders", "pos", key, body, stop, args)
        if status is None or not 200 <= status < 300:
            continue
        answer = json.loads(text)
        order_id = answer["id"]
        for r in mine:
            r.update(order_id=order_id, event_type="placed")
        retried.extend(mine)
        recorder.ack(t=time.time(), order_id=order_id, event_type="placed", version=answer["version"], key=key,
                     role="pos", path="/v1/orders", body=body, status=status, replayed=replayed,
                     answer_sha256=hashlib.sha256(text.encode()).hexdigest())
        token = json.dumps({"token": token_for(f"{args.run_id}-la-{order_id}"), "environment": "production"})
        status, _, _ = send(client, recorder, [], f"/v1/orders/{order_id}/live-activity-token", "app", "", token, stop,
                            args, put=True)
        if status is None or not 200 <= status < 300:
            continue
        for event, role, event_body in EVENTS:
            if stop():
                break
            path = f"/v1/orders/{order_id}/events"
            key = f"{args.run_id}-t{tid}-{n}-{event}"
            mine = []
            status, text, replayed = send(client, recorder, mine, path, role, key, event_body, stop, args)
            if status is None or not 200 <= status < 300:
                break
            for r in mine:
                r.update(order_id=order_id, event_type=event)
            retried.extend(mine)
            answer = json.loads(text)
            recorder.ack(t=time.time(), order_id=order_id, event_type=event, version=answer["version"], key=key,
                         role=role, path=path, body=event_body, status=status, replayed=replayed,
                         answer_sha256=hashlib.sha256(text.encode()).hexdigest())


def load(args):
    recorder = Recorder(args.journal, args.outcomes)
    retried = []
    give_up = time.time() + args.duration
    stop = lambda: os.path.exists(args.stop_file) or time.time() >= give_up  # noqa: E731
    threads = [threading.Thread(target=worker, args=(t, args, recorder, retried, stop), daemon=True)
               for t in range(1, args.threads + 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=max(0.0, give_up - time.time()) + 30)
    with open(args.retried, "w") as f:
        for r in retried:
            f.write(json.dumps(r) + "\n")
    summary = dict(recorder.counts, statuses=recorder.statuses, retried_acknowledged=len(retried),
                   stuck_threads=sum(t.is_alive() for t in threads))
    print(json.dumps(summary))
    return 0 if summary["stuck_threads"] == 0 else 1


def setup(args):
    client = FailoverClient(args.port, {"pos": args.pos_key, "app": args.app_key})
    for i in range(1, args.customers + 1):
        status, _, text = client.put(f"/v1/customers/fo-c{i}/tokens/push-to-start/{token_for(f'{args.token_tag}fo-p2s-{i}')}", "app",
                                     '{"environment":"production"}')
        if status not in (200, 201):
            sys.exit(f"push-to-start token of fo-c{i}: {status} {text[:200]}")
    body = json.dumps({"url": f"http://127.0.0.1:{args.receiver_port}/failover", "events": ["order.changed"]})
    status, _, text = client.post("/v1/webhooks", "pos", f"failover-hook-{args.run_id}", body)
    if status not in (200, 201):
        sys.exit(f"webhook registration: {status} {text[:200]}")
    print(json.loads(text)["id"])
    return 0


def probe(args):
    with open(args.outcomes, "a", buffering=1) as out:
        while not os.path.exists(args.stop_file):
            started = time.time()
            try:
                ok = subprocess.run(["psql", args.conninfo, "-XAtq", "-c", args.sql], timeout=5,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0
            except subprocess.TimeoutExpired:
                ok = False
            out.write(json.dumps({"t": started, "done": time.time(), "ok": ok}) + "\n")
            time.sleep(max(0.0, started + 0.1 - time.time()))
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("mode", choices=["setup", "load", "probe"])
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--conninfo", default="")
    p.add_argument("--sql", default="CREATE TEMP TABLE probe (i int)")
    p.add_argument("--token-tag", default="")
    p.add_argument("--pos-key", default="")
    p.add_argument("--barista-key", default="")
    p.add_argument("--app-key", default="")
    p.add_argument("--journal", default="/dev/null")
    p.add_argument("--outcomes", default="/dev/null")
    p.add_argument("--retried", default="/dev/null")
    p.add_argument("--stop-file", default="/nonexistent")
    p.add_argument("--threads", type=int, default=16)
    p.add_argument("--duration", type=float, default=300)
    p.add_argument("--stores", type=int, default=8)
    p.add_argument("--customers", type=int, default=64)
    p.add_argument("--receiver-port", type=int, default=0)
    p.add_argument("--run-id", default=str(int(time.time())))
    p.add_argument("--max-tries", type=int, default=2000)
    p.add_argument("--retry-pause", type=float, default=0.05)
    args = p.parse_args()
    sys.exit({"load": load, "setup": setup, "probe": probe}[args.mode](args))


if __name__ == "__main__":
    main()
