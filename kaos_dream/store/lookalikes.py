"""Skill names that look alike (issue 33 item 4): the stored confusable skeleton and the checks on it.

Every skill row keeps ``name_skeleton``, the TR39 skeleton of its name (:func:`..names.confusable_skeleton`).
A write of a name first fills in the rows that lack one (rows from before migration 23, or written by a
path that did not set it), then looks the new name's skeleton up in the index: one lookup per add, not
a pass over every name. Both run inside the writer's transaction, which holds the library's one write
lock on either engine, so two writers cannot both add one of a look-alike pair.
"""

from __future__ import annotations

import contextlib
import unicodedata
from typing import Any

from ..errors import ConflictError, InvalidInputError
from ..names import confusable_skeleton
from .connect import transaction

FILL_BATCH = 1000
LOOKUP_SQL = "SELECT name FROM skills WHERE name_skeleton = ? AND name <> ? AND id <> ? ORDER BY id LIMIT 1"


_MISSING_SQL = "SELECT id, name FROM skills WHERE name_skeleton IS NULL ORDER BY id LIMIT ?"
_FILL_SQL = "UPDATE skills SET name_skeleton = ? WHERE id = ? AND name = ? AND name_skeleton IS NULL"


def fill_skeletons(conn: Any, *, batched: bool = False) -> int:
    """Store the skeleton of every skill that has none; how many. Inside the caller's write transaction,
    or with ``batched`` (outside one) in short transactions of :data:`FILL_BATCH` rows whose skeletons are
    computed before each takes the lock: the first name write after upgrading a library of a million
    skills then never holds the write lock for seconds (:func:`prefill_skeletons`)."""
    filled = 0
    while True:
        rows = conn.execute(_MISSING_SQL, (FILL_BATCH,)).fetchall()
        if not rows:
            return filled
        pairs = [(confusable_skeleton(str(name)), int(skill_id), str(name)) for skill_id, name in rows]
        # a row renamed meanwhile keeps NULL and is read again with its new name
        with transaction(conn) if batched else contextlib.nullcontext():
            conn.executemany(_FILL_SQL, pairs)
        filled += len(rows)


def prefill_skeletons(conn: Any) -> int:
    """:func:`fill_skeletons` in batches before a writer takes the lock for its own write; a no-op inside
    an open transaction (the writer's :func:`claim_name` fills what is left there)."""
    return 0 if conn.in_transaction else fill_skeletons(conn, batched=True)


def lookalike_of(conn: Any, name: str, skeleton: str, exclude_id: int | None = None) -> str | None:
    """The name of another skill that looks like ``name`` (same skeleton, different spelling), or None.
    The caller has run :func:`fill_skeletons` in the same transaction."""
    row = conn.execute(LOOKUP_SQL, (skeleton, name, -1 if exclude_id is None else exclude_id)).fetchone()
    return None if row is None else str(row[0])


def first_difference(name: str, other: str) -> str:
    """Where ``name`` first differs from ``other``, spelled so a reader sees it: the two look the same."""
    for index, (mine, theirs) in enumerate(zip(name, other, strict=False), 1):
        if mine != theirs:
            return f"character {index} is {_spell(mine)} where it has {_spell(theirs)}"
    shorter, longer = (name, other) if len(name) < len(other) else (other, name)
    extra = longer[len(shorter)]
    return f"one of them has {_spell(extra)} at character {len(shorter) + 1}"


def _spell(char: str) -> str:
    label = unicodedata.name(char, "")
    return f"U+{ord(char):04X}" + (f" {label}" if label else "")


def lookalike_message(name: str, existing: str) -> str:
    return (f"skill name {name!r} looks like the existing skill {existing!r} ({first_difference(name, existing)}; "
            "the same to a reader per Unicode's confusables); choose a distinct name")


def claim_name(conn: Any, name: str, exclude_id: int | None = None) -> str:
    """The skeleton to store with ``name``; ConflictError naming the existing look-alike when there is
    one. Call inside the write transaction that then writes the name."""
    fill_skeletons(conn)
    skeleton = confusable_skeleton(name)
    existing = lookalike_of(conn, name, skeleton, exclude_id)
    if existing is not None:
        raise ConflictError(lookalike_message(name, existing))
    return skeleton


def lookalike_pairs(conn: Any, limit: int = 20) -> list[tuple[str, str]]:
    """Pairs of stored skill names with one skeleton (each later name beside the first of its group), in
    id order. Reads only: a missing skeleton is computed, not stored."""
    first: dict[str, str] = {}
    pairs: list[tuple[str, str]] = []
    for (name,) in conn.execute("SELECT name FROM skills ORDER BY id"):
        skeleton = confusable_skeleton(str(name))
        earlier = first.setdefault(skeleton, str(name))
        if earlier != name:
            pairs.append((earlier, str(name)))
            if len(pairs) >= limit:
                break
    return pairs


def forged_skeletons(conn: Any, limit: int = 20) -> list[tuple[int, str]]:
    """Skills whose stored skeleton is not their name's (an edited export): (id, name), in id order."""
    found: list[tuple[int, str]] = []
    for skill_id, name, stored in conn.execute(
            "SELECT id, name, name_skeleton FROM skills WHERE name_skeleton IS NOT NULL ORDER BY id"):
        if stored != confusable_skeleton(str(name)):
            found.append((int(skill_id), str(name)))
            if len(found) >= limit:
                break
    return found


def skeleton_problems(conn: Any, limit: int = 20) -> list[str]:
    """`kaos db check`'s lines: look-alike names, and stored skeletons that are not their name's."""
    found = [f"names: skills {a!r} and {b!r} look alike ({first_difference(b, a)}); rename one with "
             "`kaos skill update NAME --name NEW`" for a, b in lookalike_pairs(conn, limit)]
    found += [f"names: skill {i} ({n[:60]!r}) stores a name skeleton that is not its name's"
              for i, n in forged_skeletons(conn, limit)]
    return found[:limit]


def check_loaded_skeletons(conn: Any, *, stored: bool = True) -> None:
    """For `db import`: the loaded skills hold no look-alike pair and no forged skeleton (a wrong one would
    hide a name from the look-alike lookup); InvalidInputError saying which, so nothing is written."""
    for a, b in lookalike_pairs(conn, 1):
        raise InvalidInputError(f"the export holds look-alike skill names {a!r} and {b!r} ({first_difference(b, a)}; "
                                "`kaos skill add` refuses the second): rename one in the source library first "
                                "(`kaos skill update NAME --name NEW`); nothing written")
    for skill_id, name in forged_skeletons(conn, 1) if stored else []:
        raise InvalidInputError(f"the export's skill {skill_id} ({name[:60]!r}) holds a name skeleton that is not "
                                "its name's; nothing written")
