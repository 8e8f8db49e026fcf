"""Task context: the same task phrased the same way gets the same hash (the seed's ``task_hash``).

The file stores a task context by an integer key (migration 14): the hash's 64 bits read as a signed
integer, which SQLite and PostgreSQL store in 8 bytes where the hex text took 17, and which turns
back into the same hex digits (``task_hex``; in SQL ``printf('%016x', id)``)."""

from __future__ import annotations

import hashlib

from ..tokens import content_tokens

_SIGN = 1 << 63
_SPAN = 1 << 64


def task_hash(text: str | None) -> str | None:
    """Hash of the task's content words, order- and case-insensitive; ``None`` when it has none."""
    if text is None:
        return None
    tokens = sorted(set(content_tokens(text)))
    if not tokens:
        return None
    return hashlib.sha1(" ".join(tokens).encode("utf-8")).hexdigest()[:16]


def task_key(digest: str | None) -> int | None:
    """The integer key of a :func:`task_hash` digest (``None`` stays ``None``)."""
    if digest is None:
        return None
    value = int(digest, 16)
    return value - _SPAN if value >= _SIGN else value


def task_hex(key: int | None) -> str | None:
    """The hex digest of an integer key: the inverse of :func:`task_key`."""
    return None if key is None else format(key % _SPAN, "016x")
