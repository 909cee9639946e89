#!/usr/bin/env python3
"""Load generator of bench/dispatch-latency.sh (aiohttp from PyPI).

`setup`: places COUNT orders in store s1 through the API (POS key), each for its own customer, and registers
one alert token per customer (`PUT /v1/customers/{ref}/tokens/alert/{hex}`, app key), so that each order's
`ready` plans exactly one alert push. Writes the order ids, one a line, to ORDERS.

`load`: sends `ready` to those orders at a steady RATE per second, open loop: request i is started at
t0 + i / RATE whether or not earlier ones have been answered (so a slow server cannot slow the load down),
over a pool of keep-alive connections. Prints one JSON object: answers by status, how late the schedule
ran, answer latency percentiles, and the wall-clock start and end (epoch seconds).
"""
import argparse
import asyncio
import json
import sys
import time
import uuid
from datetime import datetime, timedelta, timezone

import aiohttp


def pct(values, p):
    if not values:
        return None
    values = sorted(values)
    return values[max(0, min(len(values) - 1, int(round(p / 100 * len(values) + 0.5)) - 1))]


async def setup(args):
    base = f"http://127.0.0.1:{args.port}"
    eta = (datetime.now(timezone.utc) + timedelta(minutes=30)).strftime("%Y-%m-%dT%H:%M:%SZ")
    run = uuid.uuid4().hex[:8]
    ids = [None] * args.count
    failures = []
    connector = aiohttp.TCPConnector(limit=args.connections)
    async with aiohttp.ClientSession(connector=connector) as session:
        async def one(i):
            ref = f"lat-{run}-{i}"
            token = uuid.uuid5(uuid.NAMESPACE_OID, ref).hex + uuid.uuid5(uuid.NAMESPACE_URL, ref).hex
            async with session.put(f"{base}/v1/customers/{ref}/tokens/alert/{token}",
                                   headers={"Authorization": f"Bearer {args.app_key}"},
                                   json={"environment": "production"}) as r:
                if r.status not in (200, 201):
                    failures.append(f"token {r.status} {await r.text()}")
                    return
            body = {"store_id": "s1", "pos_ref": f"L-{run}-{i}", "customer_ref": ref, "display_name": "Ana",
                    "locale": "en", "items": [{"name": "Latte", "quantity": 1}], "eta": eta}
            async with session.post(f"{base}/v1/orders", json=body,
                                    headers={"Authorization": f"Bearer {args.pos_key}", "Idempotency-Key": f"p-{ref}"}) as r:
                if r.status not in (200, 201):
                    failures.append(f"order {r.status} {await r.text()}")
                    return
                ids[i] = (await r.json())["id"]

        queue = iter(range(args.count))

        async def worker():
            for i in queue:
                await one(i)

        await asyncio.gather(*(worker() for _ in range(args.connections)))
    if failures:
        sys.exit(f"setup: {len(failures)} failures, first: {failures[0]}")
    with open(args.orders, "w") as f:
        f.write("\n".join(ids) + "\n")
    print(json.dumps({"orders": len(ids)}))


async def load(args):
    base = f"http://127.0.0.1:{args.port}"
    ids = [line.strip() for line in open(args.orders) if line.strip()]
    count = min(len(ids), int(args.rate * args.duration))
    statuses, latencies, lateness, errors = {}, [], [], {}
    connector = aiohttp.TCPConnector(limit=args.connections)
    timeout = aiohttp.ClientTimeout(total=30)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
        async def ready(order_id, due):
            late = time.perf_counter() - due
            lateness.append(late * 1000)
            t = time.perf_counter()
            try:
                async with session.post(f"{base}/v1/orders/{order_id}/events", data='{"type":"ready"}',
                                        headers={"Authorization": f"Bearer {args.barista_key}",
                                                 "Content-Type": "application/json",
                                                 "Idempotency-Key": f"ready-{order_id}"}) as r:
                    await r.read()
                    statuses[r.status] = statuses.get(r.status, 0) + 1
            except Exception as error:
                errors[type(error).__name__] = errors.get(type(error).__name__, 0) + 1
                return
            latencies.append((time.perf_counter() - t) * 1000)

        tasks = []
        wall0 = time.time()
        t0 = time.perf_counter()
        for i in range(count):
            due = t0 + i / args.rate
            delay = due - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            tasks.append(asyncio.create_task(ready(ids[i], due)))
        await asyncio.gather(*tasks)
        wall1 = time.time()
    print(json.dumps({
        "sent": count, "rate": args.rate, "statuses": {str(k): v for k, v in statuses.items()}, "errors": errors,
        "achieved_rate": count / (wall1 - wall0), "start": wall0, "end": wall1,
        "answer_ms": {"p50": pct(latencies, 50), "p90": pct(latencies, 90), "p99": pct(latencies, 99),
                      "max": max(latencies) if latencies else None},
        "schedule_late_ms": {"p50": pct(lateness, 50), "p99": pct(lateness, 99), "max": max(lateness) if lateness else None},
    }, sort_keys=True))
    ok = statuses.get(200, 0) + statuses.get(201, 0)
    sys.exit(0 if ok == count and not errors else 1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["setup", "load"])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--orders", required=True)
    parser.add_argument("--pos-key", default="")
    parser.add_argument("--barista-key", default="")
    parser.add_argument("--app-key", default="")
    parser.add_argument("--count", type=int, default=0)
    parser.add_argument("--rate", type=float, default=200)
    parser.add_argument("--duration", type=float, default=30)
    parser.add_argument("--connections", type=int, default=32)
    args = parser.parse_args()
    asyncio.run(setup(args) if args.mode == "setup" else load(args))


if __name__ == "__main__":
    main()
