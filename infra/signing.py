"""Signed events: the worker signs what it publishes, scheduler adapters verify before they act.

Where the broker enforces ACLs, only the worker's principal may write ``scheduler.actions`` (see
``schedmate acls``). Where it cannot (the embedded broker, a cluster without an authorizer), anyone who
reaches the broker could write a forged action; with ``SCHEDMATE_SIGNING_KEY`` set on the worker and on
the adapters, each worker output carries an HMAC-SHA256 of (topic, key, value) in the ``schedmate-sig``
header and a :class:`~schedmate.connectors.subscriber.Subscriber` drops (and counts) events whose
signature is missing or wrong. The MAC binds the topic and the key, so a signed record replayed onto
another topic or another job's key does not verify.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence

__all__ = ["SIGNATURE_HEADER", "signature", "signed_headers", "verify"]

SIGNATURE_HEADER = "schedmate-sig"


def signature(secret: bytes, topic: str, key: bytes | None, value: bytes | None) -> bytes:
    """HMAC-SHA256 (hex) of a record: topic, key and value, each length-prefixed (no ambiguity at the joins)."""
    mac = hmac.new(secret, digestmod=hashlib.sha256)
    for part in (topic.encode(), key or b"", value or b""):
        mac.update(len(part).to_bytes(8, "big"))
        mac.update(part)
    return mac.hexdigest().encode()


def signed_headers(secret: bytes | None, topic: str, key: bytes | None, value: bytes | None) -> list[tuple[str, bytes]]:
    """The headers to send with a record: its signature, or none when no key is configured."""
    return [] if secret is None else [(SIGNATURE_HEADER, signature(secret, topic, key, value))]


def verify(
    secret: bytes, topic: str, key: bytes | None, value: bytes | None, headers: Sequence[tuple[str, bytes]] | None
) -> bool:
    """Whether the record carries exactly one valid signature (constant-time comparison)."""
    sigs = [v for k, v in headers or () if k == SIGNATURE_HEADER]
    return len(sigs) == 1 and hmac.compare_digest(sigs[0], signature(secret, topic, key, value))
