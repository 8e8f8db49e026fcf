"""``db check`` on PostgreSQL: the full-text index against its entries (the server checks the rest).

PostgreSQL keeps its own pages and foreign keys sound, so what can drift is what kaos-dream derives:
each skill and memory must have exactly its index row, the totals must count the index, and every
term's document count must match its postings. Each check is one query; problems become lines.
"""

from __future__ import annotations

from typing import Any

from .fulltext import KINDS


def fulltext_problems(conn: Any, limit: int = 20) -> list[str]:
    problems: list[str] = []
    for _kind, (fts, postings, vocab, table, _cols) in sorted(KINDS.items()):
        missing = conn.execute(
            f"SELECT count(*) FROM {table} AS e WHERE NOT EXISTS (SELECT 1 FROM {fts} AS f WHERE f.id = e.id)"
        ).fetchone()[0]
        if missing:
            problems.append(f"full-text index {fts}: {missing} {table} without an index row")
        docs, tokens = conn.execute(f"SELECT count(*), coalesce(sum(length), 0) FROM {fts}").fetchone()
        stored = conn.execute("SELECT docs, tokens FROM fulltext_totals WHERE name = ?", (table,)).fetchone()
        if stored is None or (int(stored[0]), int(stored[1])) != (int(docs), int(tokens)):
            problems.append(f"full-text index {fts}: totals say {tuple(stored) if stored else None}, "
                            f"the index holds {docs} entries and {tokens} tokens")
        for term, counted, kept in conn.execute(
            f"SELECT p.term, p.n, v.docs FROM (SELECT term, count(*) AS n FROM {postings} GROUP BY term) AS p "
            f"FULL JOIN {vocab} AS v ON v.term = p.term WHERE p.n IS DISTINCT FROM v.docs ORDER BY 1 LIMIT ?",
            (limit,),
        ):
            problems.append(f"full-text index {fts}: term {term!r} is in {counted or 0} entries, counted {kept or 0}")
        if len(problems) >= limit:
            break
    return problems[:limit]


def vector_support(conn: Any) -> str:
    """One line for ``db info``: where semantic search's vectors are ranked on this server. pgvector is
    not used yet, so the line says whether the server could offer it; either way the vectors are
    stored as bytes and ranked by the client, as on SQLite."""
    row = conn.execute("SELECT default_version FROM pg_available_extensions WHERE name = 'vector'").fetchone()
    if row is None:
        return "ranked by the client (this server has no pgvector extension)"
    return f"ranked by the client (pgvector {row[0]} is available on this server but not used yet)"
