"""Memories: observations, results and notes an agent stores and later retrieves.

A memory is addressed by its id or its unique ``key``; deleting one removes its telemetry too.
"""

from __future__ import annotations

import hashlib
import json
import math
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from . import limits
from .errors import InvalidInputError
from .names import clean_label
from .skills import MAX_NAME, Entries, clean_text
from .store import transaction
from .store.records import as_dict, from_row
from .tokens import identifier_index_words


@dataclass(frozen=True)
class Memory:
    id: int
    kind: str
    key: str
    content: str
    metadata: dict[str, Any]
    created_at: float
    updated_at: float

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> Memory:
        return from_row(cls, row, metadata=json.loads(row["metadata"]))

    def to_dict(self) -> dict[str, Any]:
        return as_dict(self)


def _reject_constant(name: str) -> Any:
    raise InvalidInputError(f"metadata is not valid JSON: {name} is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise InvalidInputError(f"metadata number {text[:40]} is out of range")
    return value


MAX_METADATA_BYTES = limits.METADATA_BYTES


def parse_metadata(metadata: str | Mapping[str, Any] | None) -> dict[str, Any]:
    """Metadata is a JSON object; text is parsed strictly so a typo is an error, not a string."""
    if metadata is None:
        return {}
    if isinstance(metadata, str):
        if len(metadata) > 4 * MAX_METADATA_BYTES:  # not parsed at all: even pretty-printed, it is too big
            raise InvalidInputError(f"metadata is {len(metadata)} characters of JSON; the limit is "
                                    f"{MAX_METADATA_BYTES} bytes")
        try:
            value = json.loads(metadata, parse_constant=_reject_constant, parse_float=_finite_float)
        except json.JSONDecodeError as exc:
            raise InvalidInputError(f"metadata is not valid JSON: {exc.msg} at position {exc.pos}") from None
        except RecursionError:
            raise InvalidInputError("metadata is nested too deeply to be stored") from None
    else:
        value = dict(metadata)
    try:
        # Stored with SQLite's json_valid check: NaN/Infinity (not JSON) and lone surrogates (not
        # UTF-8) must be refused here with a clear message rather than by a constraint.
        json.dumps(value, allow_nan=False).encode("utf-8")
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except (ValueError, TypeError) as exc:
        raise InvalidInputError(f"metadata cannot be stored as JSON: {exc}") from None
    except RecursionError:
        raise InvalidInputError("metadata is nested too deeply to be stored") from None
    if not isinstance(value, dict):
        raise InvalidInputError("metadata must be a JSON object, e.g. '{\"source\": \"run-42\"}'")
    size = len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
    if size > MAX_METADATA_BYTES:  # issue 33 item 5: a 5 MB object was stored from MCP memory_add
        raise InvalidInputError(f"metadata is {size} bytes of JSON; the limit is {MAX_METADATA_BYTES}")
    return value


def _clean_label(value: str, what: str) -> str:
    return clean_label(value, f"memory {what}", MAX_NAME, one_rule=True)


class Memories(Entries[Memory]):
    """CRUD for memories; one instance per library."""

    _TABLE, _LABEL, _NOUN, _RECORD = "memories", "key", "memory", Memory

    def add(
        self,
        content: str,
        *,
        kind: str = "note",
        key: str | None = None,
        metadata: str | Mapping[str, Any] | None = None,
    ) -> Memory:
        """Store a memory (``kind``, an optional unique ``key``, JSON ``metadata``) and return it."""
        content = clean_text(content, "content")
        if not content.strip():
            raise InvalidInputError("memory content must not be empty")
        kind = _clean_label(kind, "kind")
        if key is None:
            digest = hashlib.sha256(f"{kind}\x00{content}".encode()).hexdigest()[:12]
            key = f"{kind}-{digest}"
        key = _clean_label(key, "key")
        meta = json.dumps(parse_metadata(metadata), sort_keys=True)
        vector = self._vectors().embed_memory(content)  # before the write lock is taken
        now = self._ctx.now()
        memory_id = self._vectors().add_entry(
            "memory",
            vector,
            "INSERT INTO memories (kind, key, key_words, content, metadata, created_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (kind, key, identifier_index_words(key), content, meta, now, now),
            f"a memory with key {key!r} already exists",
        )
        return self.get(memory_id)

    def list(self, *, kind: str | None = None, limit: int | None = None, offset: int = 0) -> list[Memory]:
        """Memories in id order, optionally of one ``kind``, paged by ``limit``/``offset``."""
        if limit is not None and limit < 0:
            raise InvalidInputError("limit must not be negative")
        if offset < 0:
            raise InvalidInputError("offset must not be negative")
        sql, params = "SELECT * FROM memories", []
        if kind is not None:
            sql += " WHERE kind = ?"
            params.append(kind)
        sql += " ORDER BY id LIMIT ? OFFSET ?"
        params += [-1 if limit is None else limit, offset]
        return [Memory.from_row(r) for r in self._conn.execute(sql, params)]

    def count(self) -> int:
        """Number of memories."""
        return int(self._conn.execute("SELECT count(*) FROM memories").fetchone()[0])

    def delete(self, ref: int | str) -> Memory:
        """Delete a memory by id or key and return what was deleted."""
        with transaction(self._conn):
            memory = self.get(ref)
            self._conn.execute("DELETE FROM memories WHERE id = ?", (memory.id,))
        return memory
