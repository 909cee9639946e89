#!/usr/bin/env python3
"""The two sides of drills/stalled-drill.sh, Python standard library only, 127.0.0.1 only.

  stream  a steady stream of real requests (GET /health/live and GET /v1/orders/{id}, alternating) at a fixed
          rate on one keep-alive connection; latency is measured from each request's scheduled start, so a
          stall of the server delays the requests behind it too. Writes one JSON line per request.
  stall   keeps N stalled connections open for D seconds: each sends half a request head and then nothing
          (silent) or one more header byte a second (trickle, which a timer reset by activity never ends).
          When the server closes one, the attacker opens a new one. Writes one JSON line per connection, and
          with --rounds the wall-clock start and end of each trickle round (all trickling connections at once).
  tail    where the stream's slowest requests fell: how many began during a trickle round or in the 50 ms
          after it, the share of the time those windows cover, and the p99 of the requests outside them.

Both print a one-line JSON summary on stdout.
"""
import argparse
import http.client
import json
import selectors
import socket
import sys
import time

HEAD = b"GET /health/live HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Stall: "


def percentile(values, p):
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def stream(args):
    paths = ["/health/live", f"/v1/orders/{args.order}"]
    headers = {"Authorization": f"Bearer {args.key}"}
    connection = http.client.HTTPConnection("127.0.0.1", args.port, timeout=10)
    start = time.monotonic()
    total = int(args.rate * args.duration)
    latencies, errors, statuses = [], 0, {}
    with open(args.out, "w") as out:
        for i in range(total):
            scheduled = start + i / args.rate
            pause = scheduled - time.monotonic()
            if pause > 0:
                time.sleep(pause)
            path = paths[i % 2]
            sent = time.monotonic()
            try:
                connection.request("GET", path, headers=headers)
                response = connection.getresponse()
                response.read()
                status = response.status
            except (OSError, http.client.HTTPException) as error:
                status = f"error: {type(error).__name__}"
                connection.close()
                connection = http.client.HTTPConnection("127.0.0.1", args.port, timeout=10)
            done = time.monotonic()
            latency = done - scheduled
            statuses[str(status)] = statuses.get(str(status), 0) + 1
            if status == 200:
                latencies.append(latency)
            else:
                errors += 1
            out.write(json.dumps({"t": time.time(), "path": path, "status": status, "latency_ms": round(latency * 1000, 3),
                                  "service_ms": round((done - sent) * 1000, 3)}) + "\n")
    ms = lambda v: None if v is None else round(v * 1000, 2)
    print(json.dumps({"requests": total, "ok": len(latencies), "errors": errors, "statuses": statuses,
                      "p50_ms": ms(percentile(latencies, 50)), "p99_ms": ms(percentile(latencies, 99)),
                      "max_ms": ms(max(latencies) if latencies else None)}))


def stall(args):
    selector = selectors.DefaultSelector()
    conns = {}  # fileno -> dict(sock, kind, opened, connected)
    records = []
    refused = 0
    start = time.monotonic()
    end = start + args.duration
    serial = 0

    def open_one():
        nonlocal serial, refused
        kind = "trickle" if serial % 2 else "silent"
        serial += 1
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setblocking(False)
        try:
            sock.connect(("127.0.0.1", args.port))
        except BlockingIOError:
            pass
        except OSError:
            refused += 1
            sock.close()
            return
        conns[sock.fileno()] = {"sock": sock, "kind": kind, "opened": time.monotonic(), "sent": False}
        selector.register(sock, selectors.EVENT_READ | selectors.EVENT_WRITE)

    def finish(fd, how):
        conn = conns.pop(fd)
        answer = conn.get("answer", b"")
        selector.unregister(conn["sock"])
        conn["sock"].close()
        now = time.monotonic()
        records.append({"kind": conn["kind"], "opened_s": round(conn["opened"] - start, 3),
                        "lifetime_s": round(now - conn["opened"], 3), "end": how,
                        "answer": answer[:40].decode("latin-1")})

    # Ramp up in batches so the listen backlog is not the thing under test.
    while len(conns) < args.count and time.monotonic() < end:
        for _ in range(min(args.batch, args.count - len(conns))):
            open_one()
        events = selector.select(timeout=0.05)
        for key, mask in events:
            handle(key, mask, conns, selector, finish)
    ramped = time.monotonic() - start
    next_trickle = time.monotonic() + 1
    rounds = []
    while time.monotonic() < end:
        for key, mask in selector.select(timeout=0.2):
            handle(key, mask, conns, selector, finish)
        if time.monotonic() >= next_trickle:
            next_trickle += 1
            began = time.time()
            for fd, conn in list(conns.items()):
                if conn["kind"] == "trickle" and conn["sent"]:
                    try:
                        conn["sock"].send(b"a")
                    except OSError:
                        finish(fd, "send_error")
            rounds.append((began, time.time()))
        while len(conns) < args.count and time.monotonic() < end:
            open_one()

    still_open = [time.monotonic() - c["opened"] for c in conns.values()]
    for fd in list(conns):
        finish(fd, "still_open_at_end")
    with open(args.out, "w") as out:
        for record in records:
            out.write(json.dumps(record) + "\n")
    if args.rounds:
        with open(args.rounds, "w") as out:
            for began, ended in rounds:
                out.write(json.dumps({"began": began, "ended": ended}) + "\n")
    ended = [r for r in records if r["end"] in ("closed", "reset")]
    # Closed (or reset) before the read timeout could have fired: the kernel refused the connection when the
    # listen backlog was full, before the server accepted it; the server's timer never saw it.
    early = [r for r in ended if r["lifetime_s"] < args.deadline - 0.05]
    closed = [r for r in ended if r["lifetime_s"] >= args.deadline - 0.05]
    lifetimes = [r["lifetime_s"] for r in closed]
    print(json.dumps({
        "target": args.count, "ramp_s": round(ramped, 2), "opened": len(records), "connect_failed": refused,
        "closed_by_server": len(closed), "ended_before_deadline": len(early),
        "answered_before_close": sum(1 for r in ended if r["answer"]),
        "lifetime_min_s": min(lifetimes, default=None), "lifetime_p50_s": percentile(lifetimes, 50),
        "lifetime_p99_s": percentile(lifetimes, 99), "lifetime_max_s": max(lifetimes, default=None),
        "still_open_at_end": len(still_open), "oldest_open_at_end_s": round(max(still_open, default=0), 3),
        "other_endings": {e: sum(1 for r in records if r["end"] == e) for e in {r["end"] for r in records} - {"closed", "reset"}},
    }))


def tail(args):
    requests = [json.loads(line) for line in open(args.requests)]
    rounds = [json.loads(line) for line in open(args.rounds)]
    after = 0.05  # what a round leaves behind: the server reading what it sent

    def in_round(request):
        began = request["t"] - request["latency_ms"] / 1000  # t is when it ended
        return any(r["began"] - 0.001 <= began <= r["ended"] + after for r in rounds)

    slowest = sorted(requests, key=lambda r: -r["latency_ms"])[:max(1, len(requests) // 100)]
    span = requests[-1]["t"] - requests[0]["t"] if len(requests) > 1 else 1
    covered = sum(r["ended"] + after - r["began"] for r in rounds
                  if requests[0]["t"] <= r["began"] <= requests[-1]["t"])
    outside = [r["latency_ms"] for r in requests if r["status"] == 200 and not in_round(r)]
    print(json.dumps({"slowest": len(slowest), "slowest_in_trickle_rounds": sum(1 for r in slowest if in_round(r)),
                      "window_share": round(covered / span, 3), "requests_outside": len(outside),
                      "p99_outside_ms": percentile(outside, 99)}))


def handle(key, mask, conns, selector, finish):
    fd = key.fd
    conn = conns.get(fd)
    if conn is None:
        return
    sock = conn["sock"]
    if mask & selectors.EVENT_WRITE and not conn["sent"]:
        error = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        if error:
            finish(fd, "connect_error")
            return
        try:
            sock.send(HEAD)
        except OSError:
            finish(fd, "send_error")
            return
        conn["sent"] = True
        selector.modify(sock, selectors.EVENT_READ)
        return
    if mask & selectors.EVENT_READ:
        try:
            data = sock.recv(4096)
        except ConnectionResetError:
            finish(fd, "reset")
            return
        except OSError:
            finish(fd, "recv_error")
            return
        if not data:
            finish(fd, "closed")
        else:
            conn.setdefault("answer", b"")
            # An answer to half a request is unexpected; keep its start and wait for the close.
            conn["answer"] += data


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("stream")
    s.add_argument("--port", type=int, required=True)
    s.add_argument("--key", required=True)
    s.add_argument("--order", required=True)
    s.add_argument("--rate", type=float, default=50)
    s.add_argument("--duration", type=float, default=60)
    s.add_argument("--out", required=True)
    a = sub.add_parser("stall")
    a.add_argument("--port", type=int, required=True)
    a.add_argument("--count", type=int, default=3000)
    a.add_argument("--batch", type=int, default=100)
    a.add_argument("--duration", type=float, default=70)
    a.add_argument("--deadline", type=float, default=10, help="the earliest a read deadline can fire (0.9 x CREMA_HTTP_READ_TIMEOUT), to sort the closes")
    a.add_argument("--out", required=True)
    a.add_argument("--rounds", help="where to write the trickle rounds' times")
    t = sub.add_parser("tail")
    t.add_argument("--requests", required=True, help="the stream's JSON lines")
    t.add_argument("--rounds", required=True, help="the attacker's trickle rounds")
    args = parser.parse_args()
    {"stream": stream, "stall": stall, "tail": tail}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
