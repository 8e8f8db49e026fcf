"""Index terms and document counts of the full-text index, on either engine.

The semantic gate (:mod:`kaos_dream.search.semantic`) weighs query words by the IDF the lexical
scorer uses, so it needs a word's index term (FTS5's porter unicode61 stem) and that term's document
count. SQLite answers from per-connection helper tables in the temp schema (an fts5vocab view of the
index, and a one-row FTS5 table with the same tokenizer); PostgreSQL from the term-count table its
triggers keep (``<kind>_fts_vocab``), with FTS5 itself as the tokenizer (store/postgres/fulltext.py).
"""

from __future__ import annotations

import sqlite3

from .dialect import is_postgres

TOKENIZER = "porter unicode61"  # the tokenizer of skills_fts and memories_fts (migration 0001)
_VOCAB = {"skill": ("skills_fts", "kaos_skills_vocab"), "memory": ("memories_fts", "kaos_memories_vocab")}


def _ensure_vocab(conn: sqlite3.Connection, kind: str) -> str:
    """Per-connection helpers in the temp schema (nothing is written to the library file)."""
    fts, vocab = _VOCAB[kind]
    if conn.execute("SELECT 1 FROM temp.sqlite_master WHERE name = ?", (vocab,)).fetchone() is None:
        conn.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{vocab} USING fts5vocab(main, {fts}, 'row')")
        conn.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{vocab}_q USING fts5(t, tokenize = '{TOKENIZER}')")
        conn.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{vocab}_qv USING fts5vocab(temp, {vocab}_q, 'row')")
    return vocab


def index_term(conn: sqlite3.Connection, kind: str, word: str) -> str | None:
    """The (first, in term order) index term FTS5 makes of ``word``, or None when it makes none."""
    if is_postgres(conn):
        from .postgres.fulltext import TOKENIZER as FTS5

        terms = sorted(FTS5.phrase(word))
        return terms[0] if terms else None
    vocab = _ensure_vocab(conn, kind)
    conn.execute(f"DELETE FROM temp.{vocab}_q")
    conn.execute(f"INSERT INTO temp.{vocab}_q (t) VALUES (?)", (word,))
    row = conn.execute(f"SELECT term FROM temp.{vocab}_qv ORDER BY term LIMIT 1").fetchone()
    return str(row[0]) if row else None


def document_count(conn: sqlite3.Connection, kind: str, term: str) -> int:
    """How many entries of ``kind`` hold ``term``."""
    if is_postgres(conn):
        table = "skills_fts_vocab" if kind == "skill" else "memories_fts_vocab"
        row = conn.execute(f"SELECT docs FROM {table} WHERE term = ?", (term,)).fetchone()
    else:
        row = conn.execute(f"SELECT doc FROM temp.{_ensure_vocab(conn, kind)} WHERE term = ?", (term,)).fetchone()
    return int(row[0]) if row else 0
