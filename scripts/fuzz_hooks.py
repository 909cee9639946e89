"""schemathesis hooks for scripts/fuzz-api: the rules of the API that no static document can hold.

The OpenAPI document states every rule it can (patterns, lengths, enums, nullability). The rules below depend
on the moment, on the server's own data or on the network, so a generated value that the document calls valid
can still be refused, and `positive_data_acceptance` would fail for a reason that is not a disagreement:

- an ETA must lie between one hour before and 24 hours after the server's clock (documented in the
  description; a date-time schema cannot be relative to "now");
- a store's time zone must be one PostgreSQL knows (`pg_timezone_names`, which differs between versions);
- an `Idempotency-Key` reused with another body is `422 idempotency_mismatch`, by design;
- a list `cursor` is valid only when the server issued it (it is opaque);
- an API key's `expires_at` must be in the future, and an admin key has no `stores` (the document says so with
  `if`/`then`, which the generator does not always follow);
- a `.p8` (as PEM text or as a path) and a customer token ES256 public key must be real keys, which no pattern
  can describe: scripts/fuzz-api makes one of each with openssl and names them in FUZZ_P8_FILE and
  FUZZ_PUBLIC_KEY_FILE;
- a webhook receiver's host must resolve, and only to public addresses (`422 webhook_address_refused`): a
  generated host name does not resolve where the fuzz runs (often without a network), so a registration
  gets a public IP literal, which Crema checks without DNS;
- a store announcement's `until` must lie within the next 24 hours, like an ETA's window;
- a receipt's `at` is when the phone saw a push, so it is read against the push's lifetime, and a funnel's `since`
  against the outbox's last 72 hours: both are moved to the last hour;
- a tenant's `rate` must have its burst at least its rate, which no pattern can compare; and limits the fuzz sets
  must not starve the rest of the run (docs/limits.md): they are set to their maximum, the rate to none.

So, for requests the document calls valid only, a well-formed ETA is moved into the window (keeping its
spread), a well-formed time zone is replaced by a known one, the Idempotency-Key gets a unique suffix, a
generated cursor is left out, and a webhook registration's `url` becomes an https URL on a public address.
Requests generated to be invalid are left exactly as generated, so the server's refusals are still checked.
"""

import hashlib
import os
import re
import uuid
from collections.abc import MutableMapping
from datetime import datetime, timedelta, timezone

import schemathesis

RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$")
ZONES = ["UTC", "America/Los_Angeles", "Europe/Madrid", "Asia/Tokyo", "America/Mexico_City", "Etc/GMT+5"]
# A public address (in no private, reserved or documentation range), so registration needs no DNS. The dispatcher's
# attempts to deliver there fail (no network, or a certificate that does not name a bare address); the fuzz checks
# the API's answers, not deliveries.
WEBHOOK_RECEIVER = "https://93.184.215.14/hooks/"


def _positive(case) -> bool:
    meta = case.meta
    return meta is not None and meta.generation.mode.is_positive


def _inside_window(value: str) -> str:
    """The same generated value, moved to a point between 50 minutes ago and 23 hours from now."""
    spread = int(hashlib.sha256(value.encode()).hexdigest(), 16) % (24 * 3600 - 20 * 60)
    moment = datetime.now(timezone.utc) - timedelta(minutes=50) + timedelta(seconds=spread)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _last_hour(value: str) -> str:
    """The same generated value, moved to a point in the last hour."""
    spread = int(hashlib.sha256(value.encode()).hexdigest(), 16) % 3600
    return (datetime.now(timezone.utc) - timedelta(seconds=spread)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _file(variable: str) -> str | None:
    path = os.environ.get(variable)
    if not path:
        return None
    with open(path, encoding="utf-8") as handle:
        return handle.read()


P8_PATH = os.environ.get("FUZZ_P8_FILE")
# The largest value of each count limit (docs/limits.md), as /openapi.yaml bounds them.
LIMIT_MAXIMA = {"tokens_per_customer": 1000, "streams_per_key": 4096, "webhooks": 1000, "events_per_order": 10000}
P8 = _file("FUZZ_P8_FILE")
PUBLIC_KEY = _file("FUZZ_PUBLIC_KEY_FILE")


@schemathesis.hook
def before_call(context, case, kwargs):
    if not _positive(case):
        return
    body = case.body
    if isinstance(body, MutableMapping):
        expires = body.get("expires_at")
        # A generated string for a nullable date-time is not always one (the union escapes the format check).
        if isinstance(expires, str):
            body["expires_at"] = (datetime.now(timezone.utc) + timedelta(days=1 + len(expires))).strftime("%Y-%m-%dT%H:%M:%SZ")
        if body.get("role") == "admin":
            body.pop("stores", None)
        if isinstance(body.get("p8"), str) and P8:
            body["p8"] = P8
        if isinstance(body.get("p8_path"), str) and P8_PATH:
            body["p8_path"] = P8_PATH
        keys = body.get("keys")
        if isinstance(keys, list):
            for key in keys:
                if isinstance(key, MutableMapping) and isinstance(key.get("public_key"), str) and PUBLIC_KEY:
                    key["public_key"] = PUBLIC_KEY
        eta = body.get("eta")
        if isinstance(eta, str) and RFC3339.match(eta):
            body["eta"] = _inside_window(eta)
        until = body.get("until")
        if isinstance(until, str) and case.operation.path == "/v1/stores/{store}/announcements":
            # An announcement ends in the next 24 hours: the same generated value, moved to 1 to 23 hours from now.
            spread = int(hashlib.sha256(until.encode()).hexdigest(), 16) % (22 * 3600)
            body["until"] = (datetime.now(timezone.utc) + timedelta(hours=1, seconds=spread)).strftime("%Y-%m-%dT%H:%M:%SZ")
        receipts = body.get("receipts")
        if isinstance(receipts, list) and case.operation.path == "/v1/me/receipts":
            for item in receipts:
                if isinstance(item, MutableMapping) and isinstance(item.get("at"), str):
                    item["at"] = _last_hour(item["at"])
        zone = body.get("timezone")
        if isinstance(zone, str):
            body["timezone"] = ZONES[len(zone) % len(ZONES)]
        url = body.get("url")
        if isinstance(url, str) and case.method == "POST" and case.operation.path == "/v1/webhooks":
            body["url"] = WEBHOOK_RECEIVER + hashlib.sha256(url.encode()).hexdigest()[:16]
        if case.method == "PUT" and case.operation.path == "/v1/admin/tenants/{tenant}/limits":
            # A burst below its rate matches the pattern but is refused (no pattern can compare two numbers); and limits
            # the fuzz sets must not starve the rest of the run: each one set is set to its maximum, the rate to none.
            for name, maximum in LIMIT_MAXIMA.items():
                if name in body:
                    body[name] = maximum
            if "rate" in body:
                body["rate"] = "0"
    # The generated key, kept, made unique: a key the document allows is still what the server reads.
    headers = case.headers
    if isinstance(headers, MutableMapping):
        for name in list(headers):
            if name.lower() == "idempotency-key":
                headers[name] = str(headers[name])[:200] + "." + uuid.uuid4().hex
    # A cursor is valid only when the server issued it, which no pattern can say: a generated one is left out.
    query = case.query
    if isinstance(query, MutableMapping) and case.operation.path == "/v1/orders":
        query.pop("cursor", None)
    if isinstance(query, MutableMapping) and case.operation.path == "/v1/stores/{store}/funnel" and isinstance(query.get("since"), str):
        query["since"] = _last_hour(query["since"])
