"""schemathesis hooks for scripts/fuzz-api: the rules of the API that no static document can hold.

The OpenAPI document states every rule it can (patterns, lengths, enums, nullability). Three rules depend on
the moment or on the server's own data, so a generated value that the document calls valid can still be
refused, and `positive_data_acceptance` would fail for a reason that is not a disagreement:

- an ETA must lie between one hour before and 24 hours after the server's clock (documented in the
  description; a date-time schema cannot be relative to "now");
- a store's time zone must be one PostgreSQL knows (`pg_timezone_names`, which differs between versions);
- an `Idempotency-Key` reused with another body is `422 idempotency_mismatch`, by design;
- a list `cursor` is valid only when the server issued it (it is opaque).

So, for requests the document calls valid only, a well-formed ETA is moved into the window (keeping its
spread), a well-formed time zone is replaced by a known one, the Idempotency-Key gets a unique suffix, and a
generated cursor is left out.
Requests generated to be invalid are left exactly as generated, so the server's refusals are still checked.
"""

import hashlib
import re
import uuid
from collections.abc import MutableMapping
from datetime import datetime, timedelta, timezone

import schemathesis

RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$")
ZONES = ["UTC", "America/Los_Angeles", "Europe/Madrid", "Asia/Tokyo", "America/Mexico_City", "Etc/GMT+5"]


def _positive(case) -> bool:
    meta = case.meta
    return meta is not None and meta.generation.mode.is_positive


def _inside_window(value: str) -> str:
    """The same generated value, moved to a point between 50 minutes ago and 23 hours from now."""
    spread = int(hashlib.sha256(value.encode()).hexdigest(), 16) % (24 * 3600 - 20 * 60)
    moment = datetime.now(timezone.utc) - timedelta(minutes=50) + timedelta(seconds=spread)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


@schemathesis.hook
def before_call(context, case, kwargs):
    if not _positive(case):
        return
    body = case.body
    if isinstance(body, MutableMapping):
        eta = body.get("eta")
        if isinstance(eta, str) and RFC3339.match(eta):
            body["eta"] = _inside_window(eta)
        zone = body.get("timezone")
        if isinstance(zone, str):
            body["timezone"] = ZONES[len(zone) % len(ZONES)]
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
