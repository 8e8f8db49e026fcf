"""Fingerprint hashes and bounded message samples."""

from __future__ import annotations

import hashlib

from .normalize import ALGORITHM, Normalized

OMITTED = "\n…[{count} characters omitted]…\n"


def fingerprint_hash(tool: str, normalized: Normalized, algorithm: int = ALGORITHM) -> str:
    """Stable identity of a failure: (algorithm version, tool, exception type, normalised text)."""
    key = "\x1f".join((f"v{algorithm}", tool, normalized.exception_type or "", normalized.text))
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def message_hash(message: str) -> str:
    return hashlib.sha256(message.encode("utf-8", "surrogatepass")).hexdigest()


def bounded_sample(message: str, limit: int) -> str:
    """The message itself when short; otherwise its head and tail (a traceback's last line is where
    the exception is) around a marker saying how much was left out."""
    if len(message) <= limit:
        return message
    tail_len = limit // 4
    marker_room = 40
    head_len = limit - tail_len - marker_room
    omitted = len(message) - head_len - tail_len
    return message[:head_len] + OMITTED.format(count=omitted) + message[-tail_len:]
