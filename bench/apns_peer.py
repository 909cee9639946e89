#!/usr/bin/env python3
"""The peer of bench/dispatch.sh: the Python `aioapns` client (4.0, from PyPI) sending the same pushes that
`crema dispatch` sends, to the same APNs simulator.

It reads the alert pushes of bench/outbox-fixture.sql (token, body, priority, collapse id, expiry) from the
database with psql, in delivery order, before its clock starts, and sends each once with
`NotificationRequest(device_token, message, priority, collapse_key, time_to_live, push_type=ALERT)` from
CONCURRENCY coroutines over aioapns' own connection pool (`max_connections`, default 10 as in aioapns).
Every push gets the body byte for byte as stored: aioapns would `json.dumps` a dict with ", " and ": "
separators, so the stored text is handed through unchanged (which also spares the peer the encoding).

aioapns hard-codes Apple's host and port on its protocol classes; they are pointed at the simulator, and
the TLS context trusts the simulator's CA file. aioapns 4.0 sends a `host` header instead of the `:authority`
pseudo-header (RFC 9113 §8.3.1 says a client MUST use `:authority`); APNs accepts that, but the simulator's
HTTP/2-to-HTTP/1 codec (swift-nio-http2) requires `:authority` and resets such streams (RST_STREAM CANCEL)
without an answer or a record. So h2's `send_headers` is wrapped to send the same value as `:authority`: the
same header block size, no other change. And the simulator ends a 200 answer with an empty DATA frame
(APNs sends HEADERS with END_STREAM and no body), on which aioapns' `on_data_received` calls `json.loads("")`;
the exception escapes `data_received`, which makes asyncio close the whole connection after every answer.
Empty DATA frames are therefore skipped, as aioapns would never see them from APNs. Prints one JSON object: the counts by status and the time
from the first request to the last answer as this process measured it.

With --echo-apns-id (bench/dispatch.sh -k sink): aioapns matches a 200 to its request by the `apns-id` response
header alone, which APNs (and the simulator) echo from the request; a plain HTTP/2 sink (nghttpd) does not, and
aioapns would drop every answer as "unknown". So the `apns-id` sent on each stream is remembered and, where an
answer lacks one, added to it as APNs would have sent it: a dictionary store and pop per push in the peer.
"""
import argparse
import asyncio
import csv
import io
import json
import ssl
import subprocess
import sys
import time
from urllib.parse import urlparse

import aioapns
import aioapns.connection
from aioapns import APNs, NotificationRequest, PushType

QUERY = """COPY (
  SELECT ct.token, d.body, d.priority, coalesce(d.collapse_id, ''), extract(epoch FROM d.expires_at)::bigint
  FROM delivery_outbox d JOIN customer_tokens ct ON ct.token_id = d.target_id
  WHERE d.target_kind = 'alert' AND d.push_type = 'alert'
  ORDER BY d.delivery_id
) TO STDOUT WITH (FORMAT csv)"""


class RawJSON(str):
    """A body that is already JSON text: sent as is."""


class _JSONShim:
    """Stands in for the `json` module inside aioapns.connection: passes RawJSON through."""

    def __getattr__(self, name):
        return getattr(json, name)

    @staticmethod
    def dumps(value, *args, **kwargs):
        if isinstance(value, RawJSON):
            return str(value)
        return json.dumps(value, *args, **kwargs)


def send_authority_not_host(echo_apns_id=False):
    """Rewrites aioapns' ("host", X) request header into (":authority", X); it sits right after :path, so
    pseudo-headers still come first. With echo_apns_id, also remembers each stream's apns-id (see
    echo_apns_id_in_answers)."""
    import h2.connection
    original = h2.connection.H2Connection.send_headers

    def send_headers(self, stream_id, headers, *args, **kwargs):
        headers = [(":authority", v) if k == "host" else (k, v) for k, v in headers]
        return original(self, stream_id, headers, *args, **kwargs)

    def send_headers_remembering(self, stream_id, headers, *args, **kwargs):
        for k, v in headers:
            if k == "apns-id":
                self.crema_apns_ids[stream_id] = v.encode() if isinstance(v, str) else v
        return send_headers(self, stream_id, headers, *args, **kwargs)

    h2.connection.H2Connection.send_headers = send_headers_remembering if echo_apns_id else send_headers


def echo_apns_id_in_answers():
    """Adds to an answer without `apns-id` the one its request carried, as APNs does (for a sink that does not)."""
    import h2.connection
    import h2.events
    h2.connection.H2Connection.crema_apns_ids = None
    original_init = h2.connection.H2Connection.__init__
    original_receive = h2.connection.H2Connection.receive_data

    def __init__(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        self.crema_apns_ids = {}

    def receive_data(self, data):
        events = original_receive(self, data)
        for event in events:
            if isinstance(event, h2.events.ResponseReceived):
                sent = self.crema_apns_ids.pop(event.stream_id, None)
                if sent is not None and not any(k == b"apns-id" for k, _ in event.headers):
                    event.headers.append((b"apns-id", sent))
        return events

    h2.connection.H2Connection.__init__ = __init__
    h2.connection.H2Connection.receive_data = receive_data


def skip_empty_data_frames():
    """aioapns parses every DATA frame as a JSON error body; an empty one (end of a 200) carries nothing."""
    protocol = aioapns.connection.APNsBaseClientProtocol
    original = protocol.on_data_received

    def on_data_received(self, raw_data, stream_id):
        if raw_data:
            original(self, raw_data, stream_id)

    protocol.on_data_received = on_data_received


def load_rows(conninfo):
    text = subprocess.run(["psql", conninfo, "-XAq", "-v", "ON_ERROR_STOP=1", "-c", QUERY],
                          check=True, capture_output=True, text=True).stdout
    return [(token, RawJSON(body), int(priority), collapse or None, int(expiry))
            for token, body, priority, collapse, expiry in csv.reader(io.StringIO(text))]


async def run(args, rows):
    url = urlparse(args.url)
    for cls in (aioapns.connection.APNsProductionClientProtocol, aioapns.connection.APNsDevelopmentClientProtocol):
        cls.APNS_SERVER = url.hostname
        cls.APNS_PORT = url.port or 443
    context = ssl.create_default_context(cafile=args.ca_file)
    context.set_alpn_protocols(["h2"])
    client = APNs(key=open(args.key_file).read(), key_id=args.key_id, team_id=args.team_id, topic=args.topic,
                  max_connections=args.max_connections, ssl_context=context, use_sandbox=False)
    statuses = {}
    errors = {}
    now = int(time.time())
    requests = [NotificationRequest(device_token=token, message=body, priority=priority, collapse_key=collapse,
                                    time_to_live=max(0, expiry - now), push_type=PushType.ALERT)
                for token, body, priority, collapse, expiry in rows]
    queue = iter(requests)

    async def worker():
        for request in queue:
            try:
                result = await client.send_notification(request)
                key = str(result.status) + ("" if result.is_successful else " " + (result.description or ""))
                statuses[key] = statuses.get(key, 0) + 1
            except Exception as error:  # counted, never retried: the benchmark reports it as invalid
                errors[type(error).__name__] = errors.get(type(error).__name__, 0) + 1

    wall0 = time.time()
    t0 = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(args.concurrency)))
    seconds = time.perf_counter() - t0
    wall1 = time.time()
    connections = len(client.pool.connections)
    for connection in list(client.pool.connections):
        connection.close()
    await asyncio.sleep(0.05)
    return {"sent": len(requests), "statuses": statuses, "errors": errors, "seconds": seconds,
            "pushes_per_s": len(requests) / seconds if seconds > 0 else None, "start": wall0, "end": wall1,
            "concurrency": args.concurrency, "max_connections": args.max_connections,
            "connections_used": connections, "aioapns": getattr(aioapns, "__version__", "4.0")}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conninfo", required=True)
    parser.add_argument("--url", required=True, help="the simulator, https://host:port")
    parser.add_argument("--ca-file", required=True)
    parser.add_argument("--key-file", required=True)
    parser.add_argument("--key-id", required=True)
    parser.add_argument("--team-id", required=True)
    parser.add_argument("--topic", required=True)
    parser.add_argument("--concurrency", type=int, default=500)
    parser.add_argument("--max-connections", type=int, default=10)
    parser.add_argument("--echo-apns-id", action="store_true",
                        help="add the request's apns-id to answers without one (a sink that does not echo it)")
    args = parser.parse_args()
    aioapns.connection.json = _JSONShim()
    send_authority_not_host(args.echo_apns_id)
    if args.echo_apns_id:
        echo_apns_id_in_answers()
    skip_empty_data_frames()
    rows = load_rows(args.conninfo)
    if not rows:
        sys.exit("no alert pushes in the outbox")
    result = asyncio.run(run(args, rows))
    print(json.dumps(result, sort_keys=True))
    ok = sum(v for k, v in result["statuses"].items() if k == "200")
    sys.exit(0 if ok == len(rows) and not result["errors"] else 1)


if __name__ == "__main__":
    main()
