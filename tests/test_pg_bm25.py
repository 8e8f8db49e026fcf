"""PostgreSQL full-text candidates score exactly like SQLite FTS5's bm25(): a generated corpus in a
real SQLite library and in a real PostgreSQL database, the same FTS5 expressions the search runs
(every coordination level and the plain OR query), compared score by score and in order."""

from __future__ import annotations

import json
import random

import psycopg
import pytest

from kaos_dream.search.candidates import coordination_levels
from kaos_dream.search.query import fts_query
from kaos_dream.store.connect import connect as sqlite_connect
from kaos_dream.store.migrations import apply_migrations as sqlite_apply
from kaos_dream.store.postgres.connect import connect
from kaos_dream.store.postgres.fulltext import TOKENIZE, TOKENIZER, bm25_candidates, compile_expression, index_entry
from kaos_dream.store.postgres.migrations import apply_migrations
from tests.pg_server import needs_postgres

pytestmark = needs_postgres
T0 = 1_767_225_600.0
REL = 1e-9

# Stems that porter folds together, diacritics unicode61 removes, case, digits, underscores,
# apostrophes and hyphens it splits on, a non-Latin script, and stop words FTS5 keeps.
VOCAB = (
    "run running runs runner connect connection connected connecting database databases timeout timeouts "
    "retry retries retried deploy deployment deploying cache cached caching error errors café Café naïve "
    "résumé ÜBER straße 数据库 v2 http2 snake_case CamelCase don't x-ray the of and flaky flakiness "
    "network networking kubernetes pod pods queue queued queueing backoff exponential jitter token tokens"
).split()
FILLER = [f"w{i}" for i in range(40)]


def _corpus(seed: int, n: int) -> list[tuple[int, str, str, str]]:
    rng = random.Random(seed)
    docs = []
    for i in range(1, n + 1):
        words = VOCAB + FILLER
        name = " ".join(rng.choice(words) for _ in range(rng.randint(1, 3))) + f" s{i}"
        description = " ".join(rng.choice(words) for _ in range(rng.choice([0, 3, 8, 20, 60])))
        tags = json.dumps([rng.choice(VOCAB) for _ in range(rng.randint(0, 3))], ensure_ascii=False)
        docs.append((i, name, description, tags))
    return docs


def _queries(seed: int, n: int) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(VOCAB) for _ in range(rng.randint(1, 5))) for _ in range(n)]


def _expressions(texts: list[str]) -> list[str]:
    out: list[str] = []
    for text in texts:
        out.extend(expr for expr, _ in coordination_levels(text))
        if (plain := fts_query(text)) is not None:
            out.append(plain)
    return out


def _sqlite(path) -> object:
    conn = sqlite_connect(str(path))
    sqlite_apply(conn, T0)
    return conn


def _sqlite_scores(conn, expression: str, limit: int, weights: tuple[float, ...] | None) -> list[tuple[int, float]]:
    bm25 = "bm25(skills_fts)" if weights is None else f"bm25(skills_fts, {', '.join(map(repr, weights))})"
    sql = (f"SELECT rowid, {bm25} AS b FROM skills_fts WHERE skills_fts MATCH ? ORDER BY b, rowid LIMIT ?")
    return [(int(r[0]), float(r[1])) for r in conn.execute(sql, (expression, limit))]


def _fts5_totals(conn) -> tuple[int, int]:
    """FTS5's own N and token total: the 'averages' record of the index (a varint list: rows, then
    tokens per column)."""
    numbers = _varints(conn.execute("SELECT block FROM skills_fts_data WHERE id = 1").fetchone()[0])
    return numbers[0], sum(numbers[1:])


def _varints(blob: bytes) -> list[int]:
    """SQLite's big-endian varints (7 bits a byte, high bit = more; a 9th byte holds 8 bits)."""
    out, i = [], 0
    while i < len(blob):
        value = 0
        for n in range(9):
            byte = blob[i]
            i += 1
            if n == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if not byte & 0x80:
                break
        out.append(value)
    return out


def _assert_same(expected: list[tuple[int, float]], got: list[tuple[int, float]], what: str) -> None:
    assert [i for i, _ in got] == [i for i, _ in expected], what
    for (i, want), (_, have) in zip(expected, got, strict=True):
        assert abs(have - want) <= REL * abs(want), f"{what}: id {i} {have!r} != {want!r}"


@pytest.fixture(scope="module")
def engines(pg_server, tmp_path_factory):
    """The same 400 skills in a SQLite library and a PostgreSQL database."""
    lite = _sqlite(tmp_path_factory.mktemp("bm25") / "kaos.db")
    url = pg_server.socket_url(pg_server.create_database("bm25"))
    pg = connect(url)
    apply_migrations(pg, T0, url)
    docs = _corpus(21, 400)
    with lite:
        lite.executemany("INSERT INTO skills (id, name, description, tags, created_at, updated_at) "
                         "VALUES (?, ?, ?, ?, 0, 0)", docs)
    with pg.transaction():
        for doc in docs:
            pg.execute("INSERT INTO skills (id, name, description, tags, created_at, updated_at) "
                       "VALUES (%s, %s, %s, %s, 0, 0)", doc)
            index_entry(pg, "skill", doc[0], doc[1:])
    yield lite, pg
    pg.close()
    lite.close()


def test_the_tokenizer_is_the_one_the_sqlite_index_uses(tmp_path) -> None:
    conn = _sqlite(tmp_path / "t.db")
    sql = conn.execute("SELECT sql FROM sqlite_master WHERE name IN ('skills_fts', 'memories_fts')").fetchall()
    conn.close()
    assert all(f"tokenize = '{TOKENIZE}'" in row[0] for row in sql) and len(sql) == 2
    assert TOKENIZER.phrase("Running") == ["run"] and TOKENIZER.phrase("Café") == ["cafe"]
    assert TOKENIZER.terms(["snake_case x-ray", "don't", '["ÜBER"]']) == [["snake", "case", "x", "rai"],
                                                                          ["don", "t"], ["uber"]]


def test_index_statistics_equal_fts5s(engines) -> None:
    lite, pg = engines
    lite.execute("CREATE VIRTUAL TABLE temp.v USING fts5vocab(main, skills_fts, row)")
    expected = dict(lite.execute("SELECT term, doc FROM temp.v").fetchall())
    lite.execute("DROP TABLE temp.v")
    assert dict(pg.execute("SELECT term, docs FROM skills_fts_vocab").fetchall()) == expected
    docs, tokens = pg.execute("SELECT docs, tokens FROM fulltext_totals WHERE name = 'skills'").fetchone()
    assert docs == 400
    assert tokens == pg.execute("SELECT sum(length) FROM skills_fts").fetchone()[0]
    lite_docs, lite_tokens = _fts5_totals(lite)
    assert (docs, tokens) == (lite_docs, lite_tokens)


@pytest.mark.parametrize("weights", [None, (2.0, 1.0, 0.5)])
def test_every_search_expression_scores_and_orders_like_fts5(engines, weights) -> None:
    lite, pg = engines
    expressions = _expressions(_queries(7, 60))
    assert len(expressions) > 150 and any(" AND " in e for e in expressions)
    checked = 0
    for expression in expressions:
        for limit in (20, 1000):
            expected = _sqlite_scores(lite, expression, limit, weights)
            got = bm25_candidates(pg, "skill", expression, limit, weights=weights or (1.0, 1.0, 1.0))
            _assert_same(expected, got, f"{expression} (limit {limit}, weights {weights})")
            checked += len(expected)
    pg.rollback()
    assert checked > 10_000


def test_scores_follow_deletes_and_edits(engines) -> None:
    lite, pg = engines
    rng = random.Random(5)
    gone = rng.sample(range(1, 401), 40)
    edited = [(i, f"edited {i} " + " ".join(rng.choice(VOCAB) for _ in range(12)))
              for i in rng.sample(range(1, 401), 40) if i not in gone]
    with lite:
        lite.executemany("DELETE FROM skills WHERE id = ?", [(i,) for i in gone])
        lite.executemany("UPDATE skills SET description = ? WHERE id = ?", [(d, i) for i, d in edited])
    with pg.transaction():
        pg.cursor().executemany("DELETE FROM skills WHERE id = %s", [(i,) for i in gone])
        for i, description in edited:
            pg.execute("UPDATE skills SET description = %s WHERE id = %s", (description, i))
            name, tags = pg.execute("SELECT name, tags FROM skills WHERE id = %s", (i,)).fetchone()
            index_entry(pg, "skill", i, (name, description, tags))
    for expression in _expressions(_queries(8, 25)):
        _assert_same(_sqlite_scores(lite, expression, 1000, None), bm25_candidates(pg, "skill", expression, 1000),
                     expression)
    assert pg.execute("SELECT docs FROM fulltext_totals WHERE name = 'skills'").fetchone()[0] == 360
    assert pg.execute("SELECT count(*) FROM skills_fts_vocab WHERE docs <= 0").fetchone()[0] == 0
    pg.rollback()


def test_deprecated_skills_are_left_out_of_candidates_but_not_of_the_statistics(engines) -> None:
    lite, pg = engines
    expression = fts_query("database timeout retry")
    everything = bm25_candidates(pg, "skill", expression, 1000)
    hidden = {i for i, _ in everything[::3]}
    pg.cursor().executemany("UPDATE skills SET deprecated = 1 WHERE id = %s", [(i,) for i in hidden])
    shown = bm25_candidates(pg, "skill", expression, 1000, include_deprecated=False)
    pg.rollback()
    assert shown == [(i, s) for i, s in everything if i not in hidden]


def test_memories_rank_like_fts5_too(pg_server, tmp_path) -> None:
    lite = _sqlite(tmp_path / "m.db")
    url = pg_server.socket_url(pg_server.create_database("mem"))
    rows = [(i, f"key-{i} {VOCAB[i % len(VOCAB)]}", " ".join(VOCAB[(i * 7 + j) % len(VOCAB)] for j in range(i % 17)),
             ["note", "fact", "lesson learned"][i % 3]) for i in range(1, 150)]
    with lite:
        lite.executemany("INSERT INTO memories (id, key, content, kind, created_at, updated_at) "
                         "VALUES (?, ?, ?, ?, 0, 0)", rows)
    with connect(url) as pg:
        apply_migrations(pg, T0, url)
        with pg.transaction():
            for i, key, content, kind in rows:
                pg.execute("INSERT INTO memories (id, key, content, kind, created_at, updated_at) "
                           "VALUES (%s, %s, %s, %s, 0, 0)", (i, key, content, kind))
                index_entry(pg, "memory", i, (key, content, kind))
        for expression in _expressions(["lesson cache", "running deploy errors", "fact key"]):
            sql = ("SELECT rowid, bm25(memories_fts) AS b FROM memories_fts WHERE memories_fts MATCH ? "
                   "ORDER BY b, rowid LIMIT 1000")
            expected = [(int(r[0]), float(r[1])) for r in lite.execute(sql, (expression,))]
            _assert_same(expected, bm25_candidates(pg, "memory", expression, 1000), expression)
        pg.rollback()
    lite.close()


def test_a_skill_cannot_be_committed_without_its_index_row(pg_url: str) -> None:
    with connect(pg_url) as pg:
        apply_migrations(pg, T0, pg_url)
        refused = pytest.raises(psycopg.errors.IntegrityConstraintViolation, match="no full-text index row")
        with refused, pg.transaction():
            pg.execute("INSERT INTO skills (name, created_at, updated_at) VALUES ('bare', 0, 0)")
        with pg.transaction():
            sid = pg.execute("INSERT INTO skills (name, created_at, updated_at) VALUES ('ok', 0, 0) RETURNING id"
                             ).fetchone()[0]
            index_entry(pg, "skill", sid, ("ok", "", "[]"))
        refused = pytest.raises(psycopg.errors.IntegrityConstraintViolation, match="no full-text index row")
        with refused, pg.transaction():  # an edit drops the stale index row; committing without re-indexing fails
            pg.execute("UPDATE skills SET description = 'new words' WHERE id = %s", (sid,))
        assert bm25_candidates(pg, "skill", '"ok"', 10)[0][0] == sid  # the rolled-back edit kept the old row
        with pg.transaction():  # columns that are not indexed need no re-index
            pg.execute("UPDATE skills SET deprecated = 1 WHERE id = %s", (sid,))
        pg.rollback()


def test_expressions_outside_the_search_subset_are_refused() -> None:
    for bad in ('"a" NOT "b"', "a*", '"a" NEAR "b"', 'name : "a"', '("a"', '"a'):
        with pytest.raises(ValueError):
            compile_expression(bad)
    compiled = compile_expression('("a" AND "b") OR "c"')
    assert compiled is not None and compiled.match == "(('a' & 'b') | 'c')"
    assert [leaf.guard for leaf in compiled.leaves] == ["('a' & 'b')", "('a' & 'b')", None]


def test_a_search_subquery_is_ranked_by_the_server_with_fts5s_scores(pg_server, tmp_path) -> None:
    """The stores' FTS5 subquery, run through the PostgreSQL connection, becomes one server-side
    ranking (the postings stay on the server) and returns what SQLite returns, with SQLite's negative
    LIMIT meaning none, and nothing for an expression without a term."""
    from kaos_dream import Library, ManualClock, Settings
    from kaos_dream.store.postgres.translate import translate

    sql = ("SELECT f.id, f.b FROM (SELECT rowid AS id, bm25(skills_fts) AS b FROM skills_fts "
           "WHERE skills_fts MATCH ? AND rowid NOT IN (SELECT id FROM skills WHERE deprecated = 1) "
           "ORDER BY b, rowid LIMIT ?) AS f ORDER BY f.b, f.id")
    url = pg_server.socket_url(pg_server.create_database("server_rank"))
    docs = _corpus(3, 120)
    answers = []
    for target in (str(tmp_path / "rank.db"), url):
        with Library(target, clock=ManualClock(T0), settings=Settings()) as lib:
            if target == url:
                text = translate(sql, lib.conn.catalog, many=False).sql
                assert "skills_fts_postings" in text and "json" not in text.lower()
            with lib.transaction():
                for _, name, description, _tags in docs:
                    lib.skills.add(name, description)
            lib.skills.deprecate(lib.conn.execute("SELECT min(id) FROM skills").fetchone()[0])
            got = []
            for expression in _expressions(_queries(11, 12)) + ['"!!"', '"deploy" AND "!!"']:
                for limit in (3, -1):
                    rows = lib.conn.execute(sql, (expression, limit)).fetchall()
                    got.append((expression, limit, [(int(r[0]), float(r[1])) for r in rows]))
            answers.append(got)
    lite, pg = answers
    assert sum(len(rows) for *_, rows in lite) > 500
    for (expression, limit, want), (_, _, have) in zip(lite, pg, strict=True):
        _assert_same(want, have, f"{expression} limit {limit}")
    assert all(rows == [] for expression, _, rows in pg if "!!" in expression and "OR" not in expression)
