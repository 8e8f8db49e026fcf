"""Task context: the same task phrased the same way gets the same hash (the seed's ``task_hash``)."""

from __future__ import annotations

import hashlib

from ..tokens import content_tokens


def task_hash(text: str | None) -> str | None:
    """Hash of the task's content words, order- and case-insensitive; ``None`` when it has none."""
    if text is None:
        return None
    tokens = sorted(set(content_tokens(text)))
    if not tokens:
        return None
    return hashlib.sha1(" ".join(tokens).encode("utf-8")).hexdigest()[:16]
