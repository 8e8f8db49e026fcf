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

Scoring. :func:`ranking_sql` (inlined by :mod:`.translate` into a search's statement) and
:func:`bm25_candidates` take the same FTS5 expression the SQLite path runs (quoted phrases, AND, OR,
parentheses: what ``search.query`` and ``search.candidates`` build); the client compiles it into
arrays, and the server matches it on the GIN index and computes per matching row what FTS5's
``bm25()`` computes, returning only the best ids and scores::

    score = - sum over the expression's phrases p (in order) of
            idf(p) * f(p) * (k1 + 1) / (f(p) + k1 * (1 - b + b * D / avgdl))

with k1 = 1.2, b = 0.75, idf = ln((N - n(p) + 0.5) / (n(p) + 0.5)) or 1e-6 when that is <= 0,
f(p) = the row's occurrences of p weighted by column, D = the row's tokens over all columns and
avgdl = all tokens / N. As in FTS5, a phrase inside an AND group the row does not satisfy counts
zero for that row (FTS5 clears the position lists of an AND node that does not match), so a
coordination level "any 2 of a, b, c" gives a row holding only a and b the score of a and b once.
The sum runs in phrase order, as FTS5's loop does (``sum(... ORDER BY phrase)``).

Known difference: a quoted phrase that FTS5 cuts into several terms (only possible for text whose
letters Python and Unicode 6.1 classify differently) is matched as the AND of its terms, with f the
smallest of their counts, instead of as an adjacent sequence.
"""

from __future__ import annotations

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
PHRASE_CACHE_ENTRIES = 4096  # query phrases whose terms are remembered (a phrase is a word or two)
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
        self._phrases: dict[str, tuple[str, ...]] = {}

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
        """The terms FTS5 makes of one quoted query phrase (remembered: a search's coordination levels
        repeat each query word in many phrases, and each tokenising is a SQLite insert and rollback)."""
        found = self._phrases.get(text)
        if found is None:
            found = tuple(self.terms([text] + [""] * (self.columns - 1))[0])
            if len(self._phrases) >= PHRASE_CACHE_ENTRIES:
                self._phrases.clear()
            self._phrases[text] = found
        return list(found)


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

# One statement, run by the server; the client sends the compiled expression (its phrases as
# arrays) and receives ``(id, bm25)`` of the best rows only. The steps:
#   leaves: each phrase's document count (the vocabulary row of a one-term phrase, a GIN count of a
#           longer one) and its idf;
#   matched: the rows the expression's tsquery matches on the GIN index (deprecated skills left out);
#   freq:   the postings of the query's terms in those rows, grouped per (row, phrase): the phrase's
#           column-weighted frequency (the smallest of its terms' for a longer phrase);
#   the sum over a row's phrases, in phrase order (``sum(... ORDER BY leaf)`` adds them one by one
#   from the first, as FTS5's loop does from 0.0), of idf * f * (k1 + 1) / (f + k1 * (1 - b + b * D /
#   avgdl)); a phrase whose AND group the row does not satisfy is left out (FTS5 counts it zero).
# Every operation is IEEE float8 with the grouping FTS5 uses, and the constants arrive as float8
# parameters, so the scores are FTS5's own; the engines' contract is the top-k set, though, so a
# last-bit difference (another libm's ln) would not break it. Earlier this ran as two statements
# with the postings shipped to the client and summed in Python (2-3x the client CPU per search).
_RANKING = """(
WITH {p}totals AS (
    SELECT t.docs::float8 AS n,
           CASE WHEN t.docs > 0 THEN t.tokens::float8 / t.docs::float8 ELSE float8 '1' END AS avgdl
    FROM fulltext_totals AS t WHERE t.name = '{totals}'
), {p}leaves AS MATERIALIZED (
    SELECT l.i, l.size, l.guard::tsquery AS guard,
           CASE WHEN (tt.n - d.docs + %({p}half)s) / (d.docs + %({p}half)s) <= 1 THEN %({p}idf_floor)s
                ELSE ln((tt.n - d.docs + %({p}half)s) / (d.docs + %({p}half)s)) END AS idf
    FROM unnest(%({p}first)s::text[], %({p}phrase)s::text[], %({p}guard)s::text[], %({p}size)s::int[])
         WITH ORDINALITY AS l (first, phrase, guard, size, i)
    CROSS JOIN {p}totals AS tt
    CROSS JOIN LATERAL (
        SELECT CASE WHEN l.size = 1
                    THEN coalesce((SELECT v.docs FROM {vocab} AS v WHERE v.term = l.first), 0)
                    ELSE (SELECT count(*) FROM {fts} AS x WHERE x.document @@ l.phrase::tsquery) END::float8 AS docs
    ) AS d
), {p}matched AS MATERIALIZED (
    SELECT f.id, f.length::float8 AS length, f.document FROM {fts} AS f
    WHERE f.document @@ %({p}match)s::tsquery {filter}
), {p}freq AS (
    SELECT p.id, u.leaf,
           min((p.tf[1] * %({p}w1)s + p.tf[2] * %({p}w2)s) + p.tf[3] * %({p}w3)s) AS f, count(*) AS present
    FROM unnest(%({p}terms)s::text[], %({p}term_leaf)s::bigint[]) AS u (term, leaf)
    JOIN {postings} AS p ON p.term = u.term
    JOIN {p}matched AS m ON m.id = p.id
    GROUP BY p.id, u.leaf
)
SELECT m.id AS id,
       -coalesce(sum(l.idf * ((q.f * %({p}k1p1)s)
                              / (q.f + %({p}k1)s * (%({p}one)s - %({p}b)s + %({p}b)s * m.length / tt.avgdl)))
                     ORDER BY l.i), float8 '0') AS b
FROM {p}matched AS m
CROSS JOIN {p}totals AS tt
LEFT JOIN ({p}freq AS q JOIN {p}leaves AS l ON l.i = q.leaf AND q.present = l.size)
       ON q.id = m.id AND (l.guard IS NULL OR m.document @@ l.guard)
GROUP BY m.id
ORDER BY b, m.id
LIMIT {limit}
)"""

_NOT_DEPRECATED = "AND f.id NOT IN (SELECT id FROM skills WHERE deprecated = 1)"


def ranking_sql(kind: str, prefix: str, *, limit: str | None, live_only: bool) -> str:
    """A parenthesised subquery yielding ``(id, b)``, the best rows of ``kind`` by FTS5's ``bm25()``
    (lower is better, ties by id), for the parameters :func:`ranking_params` fills under ``prefix``.
    ``limit`` names the parameter holding the row limit (None: every match)."""
    fts, postings, vocab, table, _names = KINDS[kind]
    return _RANKING.format(
        p=prefix, totals=table, fts=fts, postings=postings, vocab=vocab,
        filter=_NOT_DEPRECATED if live_only and kind == "skill" else "",
        limit="ALL" if limit is None else f"%({limit})s",
    )


def _array(values: Sequence[str | int | None]) -> str:
    """A PostgreSQL array literal (``{"a","b",NULL}``), sent as one string the SQL casts: the
    connection's fast lane writes strings as literals itself, while a Python list went through
    psycopg's slower client-side binding (about a tenth of a search's client CPU)."""
    items = []
    for value in values:
        if value is None:
            items.append("NULL")
        elif isinstance(value, int):
            items.append(str(value))
        else:
            items.append('"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"')
    return "{" + ",".join(items) + "}"


def ranking_params(expression: str, prefix: str, *, weights: Sequence[float] = (1.0, 1.0, 1.0),
                   tokenizer: Tokenizer = TOKENIZER) -> dict[str, object]:
    """The parameters of :func:`ranking_sql` for one FTS5 ``expression`` (a NULL tsquery, which
    matches nothing, when no phrase of it has a term)."""
    if len(weights) != 3:
        raise ValueError(f"expected 3 column weights, got {len(weights)}")
    compiled = compile_expression(expression, tokenizer)
    leaves = compiled.leaves if compiled is not None else ()
    w1, w2, w3 = (float(w) for w in weights)
    terms: list[str] = []
    term_leaf: list[int] = []
    for i, leaf in enumerate(leaves, start=1):
        terms.extend(leaf.terms)
        term_leaf.extend([i] * len(leaf.terms))
    p = prefix
    return {
        f"{p}match": None if compiled is None else compiled.match,
        f"{p}first": _array([leaf.terms[0] for leaf in leaves]),
        f"{p}phrase": _array([" & ".join(_lexeme(t) for t in leaf.terms) for leaf in leaves]),
        f"{p}guard": _array([leaf.guard for leaf in leaves]),
        f"{p}size": _array([len(leaf.terms) for leaf in leaves]),
        f"{p}terms": _array(terms), f"{p}term_leaf": _array(term_leaf),
        f"{p}w1": w1, f"{p}w2": w2, f"{p}w3": w3,
        f"{p}k1": K1, f"{p}k1p1": K1 + 1.0, f"{p}b": B, f"{p}one": 1.0, f"{p}half": 0.5,
        f"{p}idf_floor": IDF_FLOOR,
    }


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
    returns them on SQLite (FTS5's sign: lower is better), ranked by the server."""
    names = KINDS[kind][4]
    if len(weights) != len(names):
        raise ValueError(f"{kind} has {len(names)} indexed columns, got {len(weights)} weights")
    if limit <= 0:
        return []
    params = ranking_params(expression, "r_", weights=weights, tokenizer=tokenizer)
    if params["r_match"] is None:
        return []
    params["r_limit"] = limit
    sql = "SELECT id, b FROM " + ranking_sql(kind, "r_", limit="r_limit", live_only=not include_deprecated) + " AS r"
    return [(int(i), float(b)) for i, b in conn.execute(sql.encode("utf-8"), params).fetchall()]
