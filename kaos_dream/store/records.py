"""Rows to dataclasses and dataclasses to JSON-able dicts, field by field in declaration order.

The stores' records (skills, memories, episodes, outcomes, log entries, edges) are frozen dataclasses
whose fields carry their column names; these two helpers spell out only the fields whose stored or
shown form differs (JSON text, 0/1 flags, a node stored as two columns), so adding a column means
adding a field, not editing two hand-written lists.
"""

from __future__ import annotations

import sqlite3
from dataclasses import fields
from typing import Any, TypeVar

T = TypeVar("T")


def from_row(cls: type[T], row: sqlite3.Row, **converted: Any) -> T:
    """An instance of the dataclass ``cls`` from ``row``: each field from the column of its name, or
    from ``converted`` where the stored form needs turning into the field's value."""
    values = {f.name: converted[f.name] if f.name in converted else row[f.name] for f in fields(cls)}  # type: ignore[arg-type]
    return cls(**values)


def as_dict(record: Any, **converted: Any) -> dict[str, Any]:
    """The dataclass ``record`` as a dict in field order (values as they are, not copied), with
    ``converted`` replacing the fields that are shown in another form."""
    return {f.name: converted[f.name] if f.name in converted else getattr(record, f.name) for f in fields(record)}
