"""The identifier words stored beside each skill name and memory key (migration 0022), kept true.

The full-text index reads a name followed by the words splitting it as an identifier adds
(:func:`kaos_dream.tokens.identifier_index_words`). kaos-dream's writers store them with the name;
a row written another way (plain SQL, an import of an older export) may hold none or stale ones, so
the name still matches exactly but its words do not. ``kaos db check`` reports such rows and
``kaos db reindex`` rewrites their words, which the index triggers (SQLite) or the commit
(PostgreSQL) turn into the new index entry. Works on both engines.
"""

from __future__ import annotations

import sqlite3

from ..tokens import identifier_index_words
from .connect import transaction

# (table, name column, words column, what one row is called)
FIELDS = (("skills", "name", "name_words", "skill name"), ("memories", "key", "key_words", "memory key"))


def stale_name_words(conn: sqlite3.Connection, table: str) -> list[tuple[int, str]]:
    """``(id, words)`` of every row of ``table`` whose stored words differ from its name's, by id."""
    _table, name, words, _what = next(f for f in FIELDS if f[0] == table)
    return [
        (int(entry_id), expected)
        for entry_id, value, stored in conn.execute(f"SELECT id, {name}, {words} FROM {table} ORDER BY id")
        if stored != (expected := identifier_index_words(value))
    ]


def name_word_problems(conn: sqlite3.Connection) -> list[str]:
    """One line per table with rows indexed without their identifier words, naming the fix."""
    problems = []
    for table, _name, _words, what in FIELDS:
        stale = stale_name_words(conn, table)
        if stale:
            shown = ", ".join(str(entry_id) for entry_id, _ in stale[:5]) + (", ..." if len(stale) > 5 else "")
            problems.append(
                f"full-text index: {len(stale)} {what}(s) indexed without their identifier words (ids {shown}; "
                "written by plain SQL or an older import), so a split word such as 'crafting table' misses "
                "them; run `kaos db reindex` to index them"
            )
    return problems


def refresh_name_words(conn: sqlite3.Connection) -> dict[str, int]:
    """Rewrite every stale row's identifier words, in one transaction; returns how many per table."""
    done: dict[str, int] = {}
    with transaction(conn):
        for table, _name, words, _what in FIELDS:
            stale = stale_name_words(conn, table)
            for entry_id, expected in stale:
                conn.execute(f"UPDATE {table} SET {words} = ? WHERE id = ?", (expected, entry_id))
            done[table] = len(stale)
    return done
