"""Full-text search on PostgreSQL that ranks exactly like SQLite FTS5's ``bm25()``.

Tokenising. Both engines must cut text into the same terms, or no BM25 statistic can agree.
PostgreSQL's text search configurations cannot reproduce FTS5's ``porter unicode61`` (its
``english`` stemmer is Snowball's Porter2, which stems many words differently, and it drops stop
words FTS5 keeps). So there is one tokeniser for both: FTS5 itself, through the ``sqlite3`` module
every Python ships. :class:`Tokenizer` inserts the text into a private in-memory FTS5 table with the
migration's tokenizer and reads the terms back from ``fts5vocab`` (then rolls back). The terms are
therefore the ones SQLite's index holds, by construction, whatever the SQLite and Unicode versions.

Storing. Per entry: ``<kind>_fts`` holds a ``tsvector`` of its distinct terms (GIN-indexed: the
candidate match) and its length in tokens; ``<kind>_fts_postings`` holds, per term, the count in
each column. Triggers (migration 0001) keep ``fulltext_totals`` (entries N, tokens for the average
length) and ``<kind>_fts_vocab`` (each term's document frequency). Writers call :func:`index_entry`
in the transaction that writes the entry; a deferred check refuses to commit an entry without its
index row. Postings are inserted in term order so two writers lock vocabulary rows in the same
order (no deadlock; writers of one kind serialise on the totals row, as all SQLite writers do).

Scoring. :func:`bm25_candidates` takes the same FTS5 expression the SQLite path runs (quoted
phrases, AND, OR, parentheses: what ``search.query`` and ``search.candidates`` build), matches it on
the GIN index, and computes per matching row what FTS5's ``bm25()`` computes::

    score = - sum over the expression's phrases p (in order) of
            idf(p) * f(p) * (k1 + 1) / (f(p) + k1 * (1 - b + b * D / avgdl))

with k1 = 1.2, b = 0.75, idf = ln((N - n(p) + 0.5) / (n(p) + 0.5)) or 1e-6 when that is <= 0,
f(p) = the row's occurrences of p weighted by column, D = the row's tokens over all columns and
avgdl = all tokens / N. As in FTS5, a phrase inside an AND group the row does not satisfy counts
zero for that row (FTS5 clears the position lists of an AND node that does not match), so a
coordination level "any 2 of a, b, c" gives a row holding only a and b the score of a and b once.
The sum runs in phrase order from 0.0, as FTS5's loop does.

Known difference: a quoted phrase that FTS5 cuts into several terms (only possible for text whose
letters Python and Unicode 6.1 classify differently) is matched as the AND of its terms, with f the
smallest of their counts, instead of as an adjacent sequence.
"""

from __future__ import annotations

import math
import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import psycopg

TOKENIZE = "porter unicode61"  # must equal skills_fts / memories_fts in store/migrations/0001
K1 = 1.2
B = 0.75
IDF_FLOOR = 1e-6
MAX_LEXEME_BYTES = 2046  # tsvector's limit; longer terms are still counted, never matched by a query

# Per kind: the index tables, the indexed columns in FTS5's order, and the totals row.
KINDS = {
    "skill": ("skills_fts", "skills_fts_postings", "skills_fts_vocab", "skills", ("name", "description", "tags")),
    "memory": ("memories_fts", "memories_fts_postings", "memories_fts_vocab", "memories", ("key", "content", "kind")),
}
POSTGRES_ONLY_TABLES = ("fulltext_totals",) + tuple(t for spec in KINDS.values() for t in spec[:3])
# What each indexed column reads from the entry's row ``e``: the name (key) followed by its identifier
# words (migration 0022), exactly as SQLite's ``<kind>_fts_source`` view and triggers give it to FTS5.
SOURCES = {
    "skill": ("e.name || ' ' || e.name_words", "e.description", "e.tags"),
    "memory": ("e.key || ' ' || e.key_words", "e.content", "e.kind"),
}


def sources(kind: str, columns: Sequence[str]) -> tuple[str, ...]:
    """:data:`SOURCES` for a table with ``columns``; before migration 0022 (an older export being
    loaded, then upgraded) the name alone, as the index read it then."""
    names = KINDS[kind][4]
    return SOURCES[kind] if f"{names[0]}_words" in columns else tuple(f"e.{c}" for c in names)


class Tokenizer:
    """FTS5's own tokeniser, one private in-memory SQLite database per thread."""

    def __init__(self, tokenize: str = TOKENIZE, columns: int = 3) -> None:
        self.tokenize = tokenize
        self.columns = columns
        self._local = threading.local()

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(":memory:", isolation_level=None)
            names = ", ".join(f"c{i}" for i in range(self.columns))
            conn.execute(f"CREATE VIRTUAL TABLE doc USING fts5 ({names}, tokenize = '{self.tokenize}')")
            conn.execute("CREATE VIRTUAL TABLE doc_terms USING fts5vocab (doc, instance)")
            self._local.conn = conn
        return conn

    def terms(self, columns: Sequence[str]) -> list[list[str]]:
        """The terms of each column, in order, as FTS5 indexes them."""
        if len(columns) != self.columns:
            raise ValueError(f"expected {self.columns} columns, got {len(columns)}")
        conn = self._conn()
        out: list[list[str]] = [[] for _ in range(self.columns)]
        conn.execute("BEGIN")
        try:
            conn.execute(f"INSERT INTO doc (rowid, {', '.join(f'c{i}' for i in range(self.columns))}) "
                         f"VALUES (1, {', '.join('?' * self.columns)})", tuple(columns))
            for term, column, _offset in conn.execute(
                "SELECT term, col, offset FROM doc_terms WHERE doc = 1 ORDER BY col, offset"
            ):
                out[int(column[1:])].append(term)
        finally:
            conn.execute("ROLLBACK")
        return out

    def phrase(self, text: str) -> list[str]:
        """The terms FTS5 makes of one quoted query phrase."""
        return self.terms([text] + [""] * (self.columns - 1))[0]


TOKENIZER = Tokenizer()


# --- writing ---------------------------------------------------------------------------------------


def index_entry(conn: psycopg.Connection, kind: str, entry_id: int, columns: Sequence[str],
                tokenizer: Tokenizer = TOKENIZER) -> None:
    """(Re-)index one skill or memory (``columns`` in the order of ``KINDS[kind]``), in the caller's
    transaction. The triggers update the totals and document frequencies."""
    fts, postings, _vocab, _table, names = KINDS[kind]
    per_column = tokenizer.terms([c or "" for c in columns])
    counts: dict[str, list[int]] = {}
    for position, terms in enumerate(per_column):
        for term in terms:
            counts.setdefault(term, [0] * len(names))[position] += 1
    length = sum(len(terms) for terms in per_column)
    lexemes = sorted(t for t in counts if len(t.encode("utf-8")) <= MAX_LEXEME_BYTES)
    conn.execute(f"DELETE FROM {fts} WHERE id = %s", (entry_id,))
    conn.execute(f"INSERT INTO {fts} (id, document, length) VALUES (%s, array_to_tsvector(%s::text[]), %s)",
                 (entry_id, lexemes, length))
    with conn.cursor() as cursor:
        cursor.executemany(f"INSERT INTO {postings} (term, id, tf) VALUES (%s, %s, %s)",
                           [(term, entry_id, counts[term]) for term in sorted(counts)])


def unindex_entry(conn: psycopg.Connection, kind: str, entry_id: int) -> None:
    """Drop an entry's index row (deleting the entry itself does this through ON DELETE CASCADE)."""
    conn.execute(f"DELETE FROM {KINDS[kind][0]} WHERE id = %s", (entry_id,))


# --- the FTS5 expression subset --------------------------------------------------------------------


@dataclass(frozen=True)
class Node:
    """``op`` is ``phrase`` (``text`` set), ``and`` or ``or`` (``children`` set)."""

    op: str
    text: str = ""
    children: tuple[Node, ...] = ()


def _lex(expression: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    i, n = 0, len(expression)
    while i < n:
        ch = expression[i]
        if ch.isspace():
            i += 1
        elif ch in "()":
            out.append((ch, ch))
            i += 1
        elif ch == '"':
            j, text = i + 1, []
            while True:
                if j >= n:
                    raise ValueError(f"unterminated phrase in {expression!r}")
                if expression[j] == '"':
                    if j + 1 < n and expression[j + 1] == '"':
                        text.append('"')
                        j += 2
                        continue
                    break
                text.append(expression[j])
                j += 1
            out.append(("phrase", "".join(text)))
            i = j + 1
        elif expression.startswith(("AND", "OR"), i):
            word = "AND" if expression.startswith("AND", i) else "OR"
            out.append((word, word))
            i += len(word)
        else:
            raise ValueError(f"unsupported FTS5 syntax at {expression[i:i + 20]!r}: only quoted phrases, AND, OR "
                             "and parentheses")
    return out


def parse(expression: str) -> Node:
    """The tree of an FTS5 expression made of quoted phrases, AND, OR and parentheses (AND binds
    tighter than OR, as in FTS5)."""
    tokens = _lex(expression)
    position = 0

    def peek() -> str | None:
        return tokens[position][0] if position < len(tokens) else None

    def take(kind: str) -> str:
        nonlocal position
        if peek() != kind:
            raise ValueError(f"expected {kind} in {expression!r}")
        position += 1
        return tokens[position - 1][1]

    def group(op: str, items: list[Node]) -> Node:
        return items[0] if len(items) == 1 else Node(op, children=tuple(items))

    def primary() -> Node:
        if peek() == "(":
            take("(")
            node = disjunction()
            take(")")
            return node
        return Node("phrase", text=take("phrase"))

    def conjunction() -> Node:
        items = [primary()]
        while peek() == "AND":
            take("AND")
            items.append(primary())
        return group("and", items)

    def disjunction() -> Node:
        items = [conjunction()]
        while peek() == "OR":
            take("OR")
            items.append(conjunction())
        return group("or", items)

    node = disjunction()
    if position != len(tokens):
        raise ValueError(f"unexpected {tokens[position][1]!r} in {expression!r}")
    return node


def _lexeme(term: str) -> str:
    return "'" + term.replace("\\", "\\\\").replace("'", "''") + "'"


@dataclass(frozen=True)
class Leaf:
    """One phrase of the expression: its terms, and the AND groups that must hold for it to count."""

    terms: tuple[str, ...]
    guard: str | None  # a tsquery, or None at the top level


@dataclass(frozen=True)
class Compiled:
    match: str  # the tsquery the GIN index answers
    leaves: tuple[Leaf, ...]


def compile_expression(expression: str, tokenizer: Tokenizer = TOKENIZER) -> Compiled | None:
    """The tsquery and the scored phrases of an FTS5 expression; None when no phrase has a term
    (FTS5 then matches nothing)."""
    leaves: list[Leaf] = []

    def tsquery(node: Node) -> str | None:
        if node.op == "phrase":
            terms = tokenizer.phrase(node.text)
            return " & ".join(_lexeme(t) for t in terms) if terms else None
        parts = [tsquery(child) for child in node.children]
        if node.op == "and":
            return None if any(p is None for p in parts) else "(" + " & ".join(parts) + ")"  # type: ignore[arg-type]
        kept = [p for p in parts if p is not None]
        return "(" + " | ".join(kept) + ")" if kept else None

    def walk(node: Node, guards: tuple[str, ...]) -> None:
        if node.op == "phrase":
            terms = tuple(tokenizer.phrase(node.text))
            if terms:
                leaves.append(Leaf(terms, " & ".join(guards) if guards else None))
            return
        if node.op == "and":
            own = tsquery(node)
            if own is None:
                return  # an AND with an empty phrase matches nothing: its phrases never count
            guards = (*guards, own)
        for child in node.children:
            walk(child, guards)

    tree = parse(expression)
    match = tsquery(tree)
    if match is None:
        return None
    walk(tree, ())
    return Compiled(match, tuple(leaves))


# --- scoring ---------------------------------------------------------------------------------------

# Two round trips, each one index-driven set operation: the statistics (N, the average length, each
# leaf's document count), then the matching rows with their AND-group guards and the postings of the
# query's terms. The sum itself runs here, in Python floats (IEEE doubles, as float8), in the order
# and with the grouping of FTS5's loop; scoring it in SQL cost one correlated postings lookup per
# (row, phrase) pair: 55 ms for a 300-row match on a loaded machine.
_STATISTICS = """
SELECT t.docs, t.tokens,
       (SELECT coalesce(array_agg(coalesce(v.docs, 0) ORDER BY u.i), '{{}}')
        FROM unnest(%(singles)s::text[]) WITH ORDINALITY AS u (term, i)
        LEFT JOIN {vocab} AS v ON v.term = u.term) AS single_docs,
       (SELECT coalesce(array_agg((SELECT count(*) FROM {fts} AS f WHERE f.document @@ u.q::tsquery)
                                  ORDER BY u.i), '{{}}')
        FROM unnest(%(phrases)s::text[]) WITH ORDINALITY AS u (q, i)) AS phrase_docs
FROM fulltext_totals AS t WHERE t.name = %(totals)s
"""

_MATCHES = """
WITH g AS MATERIALIZED (
    SELECT u.q::tsquery AS q, u.i FROM unnest(%(guards)s::text[]) WITH ORDINALITY AS u (q, i)
)
SELECT f.id, f.length,
       (SELECT coalesce(array_agg(f.document @@ g.q ORDER BY g.i), '{{}}') FROM g) AS guards,
       coalesce(p.terms, '{{}}'), coalesce(p.tf1, '{{}}'), coalesce(p.tf2, '{{}}'), coalesce(p.tf3, '{{}}')
FROM {fts} AS f
CROSS JOIN LATERAL (
    SELECT array_agg(p.term) AS terms, array_agg(p.tf[1]) AS tf1, array_agg(p.tf[2]) AS tf2,
           array_agg(p.tf[3]) AS tf3
    FROM {postings} AS p WHERE p.id = f.id AND p.term = ANY (%(terms)s::text[])
) AS p
WHERE f.document @@ %(match)s::tsquery {filter}
"""

_NOT_DEPRECATED = "AND f.id NOT IN (SELECT id FROM skills WHERE deprecated = 1)"


def bm25_candidates(
    conn: psycopg.Connection,
    kind: str,
    expression: str,
    limit: int,
    *,
    weights: Sequence[float] = (1.0, 1.0, 1.0),
    include_deprecated: bool = True,
    tokenizer: Tokenizer = TOKENIZER,
) -> list[tuple[int, float]]:
    """``(id, bm25)`` of the best ``limit`` rows matching the FTS5 ``expression``, as
    ``SELECT rowid, bm25(<kind>_fts, *weights) ... MATCH expression ORDER BY 2, rowid LIMIT limit``
    returns them on SQLite (FTS5's sign: lower is better)."""
    fts, postings, vocab, _table, names = KINDS[kind]
    if len(weights) != len(names):
        raise ValueError(f"{kind} has {len(names)} indexed columns, got {len(weights)} weights")
    compiled = compile_expression(expression, tokenizer)
    if compiled is None or limit <= 0:
        return []
    leaves = compiled.leaves
    singles = [leaf.terms[0] for leaf in leaves if len(leaf.terms) == 1]
    phrases = [" & ".join(_lexeme(t) for t in leaf.terms) for leaf in leaves if len(leaf.terms) > 1]
    stats = conn.execute(_STATISTICS.format(fts=fts, vocab=vocab).encode("utf-8"),
                         {"totals": KINDS[kind][3], "singles": singles, "phrases": phrases}).fetchone()
    n = float(stats[0])
    avgdl = float(stats[1]) / n if stats[0] > 0 else 1.0
    single_docs, phrase_docs = iter(stats[2]), iter(stats[3])
    idfs = []
    for leaf in leaves:
        hit = float(next(single_docs) if len(leaf.terms) == 1 else next(phrase_docs))
        value = math.log((n - hit + 0.5) / (hit + 0.5))
        idfs.append(IDF_FLOOR if value <= 0 else value)
    deprecated = "" if include_deprecated or kind != "skill" else _NOT_DEPRECATED
    terms = sorted({t for leaf in leaves for t in leaf.terms})
    guards = sorted({leaf.guard for leaf in leaves if leaf.guard is not None})  # each AND group once
    guard_of = [None if leaf.guard is None else guards.index(leaf.guard) for leaf in leaves]
    rows = conn.execute(_MATCHES.format(fts=fts, postings=postings, filter=deprecated).encode("utf-8"), {
        "match": compiled.match, "guards": guards, "terms": terms,
    }).fetchall()
    w1, w2, w3 = (float(w) for w in weights)
    k1p1 = K1 + 1.0
    scored: list[tuple[float, int]] = []
    for entry_id, length, held, p_terms, tf1, tf2, tf3 in rows:
        freq = {t: a * w1 + b * w2 + c * w3 for t, a, b, c in zip(p_terms, tf1, tf2, tf3, strict=True)}
        norm = K1 * (1.0 - B + B * float(length) / avgdl)
        total = 0.0
        for leaf, idf, guard in zip(leaves, idfs, guard_of, strict=True):
            if guard is not None and not held[guard]:
                f = 0.0
            elif len(leaf.terms) == 1:
                f = freq.get(leaf.terms[0], 0.0)
            else:
                f = min(freq[t] for t in leaf.terms) if all(t in freq for t in leaf.terms) else 0.0
            total += idf * ((f * k1p1) / (f + norm))
        scored.append((-total, int(entry_id)))
    scored.sort()
    return [(i, score) for score, i in scored[:limit]]
