"""A webhook receiver for Crema's tutorials (docs/tutorial-webhooks.md), as docs/webhooks.md ("Verifying a request")
explains it: checks Crema-Signature, refuses stale timestamps, handles each event id once, prints what arrived.
Usage: python3 docs/examples/receiver.py <secret as registration answered it>   (listens on 127.0.0.1:9000)"""
import hashlib, hmac, json, sys, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SECRET = sys.argv[1].encode()   # the whole secret registration answered, "whsec_" included
seen = set()                    # event ids already handled; keep them in your database, for days

def verified(header: str, body: bytes) -> bool:
    t, signatures = None, []
    for part in header.split(","):
        key, _, value = part.partition("=")
        if key == "t" and value.isdigit():
            t = int(value)
        elif key == "v1":
            signatures.append(value)
    if t is None or abs(time.time() - t) > 300:
        return False
    expected = hmac.new(SECRET, f"{t}.".encode() + body, hashlib.sha256).hexdigest()
    return any(hmac.compare_digest(expected, signature) for signature in signatures)

class Receiver(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        if not verified(self.headers.get("Crema-Signature", ""), body):
            self.send_response(401)
            self.end_headers()
            return
        event = json.loads(body)
        if event["id"] not in seen:         # at least once: the same event can come again
            seen.add(event["id"])
            print(event["type"], event["id"], flush=True)   # act on event["data"] here, or queue it
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass

ThreadingHTTPServer(("127.0.0.1", 9000), Receiver).serve_forever()
