"""Search: safe queries for any text, exact FTS sync, BM25 order checked against rank-bm25."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rank_bm25 import BM25Okapi

from kaos_dream import Library, ManualClock, Settings
from kaos_dream.search import fts_query, tokenize

HOSTILE = [
    '"', "'", 'AND', 'OR NOT', '-', '*', '(', ')', 'NEAR(a b)', 'name:foo', '^start', 'a"b', '\x00',
    'DROP TABLE skills;--', '{col}: x', '"""', '+', 'x' * 10_000, '   ', '', '🙂 emoji', 'ÄÖÜ straße',
]


def test_hostile_queries_never_raise(mem_lib: Library) -> None:
    mem_lib.skills.add("drop-table", "drop table helper")
    for text in HOSTILE:
        mem_lib.search(text)
        mem_lib.search(text, kind="skill")
        mem_lib.search(text, kind="memory")


def test_fts_query_quotes_every_token() -> None:
    assert fts_query('convert "csv" AND parquet*') == '"convert" OR "csv" OR "parquet"'
    assert fts_query("the and of") == '"the" OR "and" OR "of"'  # only stop words: keep them
    assert fts_query("*** ---") is None
    assert tokenize("snake_case words") == ["snake", "case", "words"]


@pytest.fixture(scope="module")
def live_and_dead() -> Iterator[Library]:
    """One library for every generated query (semantic retrieval on, as by default): building and
    embedding it per example was most of the property test's time; the queries only read it."""
    with Library(":memory:", clock=ManualClock(), settings=Settings()) as lib:
        lib.skills.add("live-and", "and or not near quote star paren")
        lib.skills.add("dead-and", "and or not near quote star paren")
        lib.skills.deprecate("dead-and")
        yield lib


@settings(max_examples=300, deadline=None)
@given(text=st.one_of(st.text(max_size=200), st.sampled_from(HOSTILE), st.text(alphabet='"*()-:^ ANDORT', max_size=50)))
def test_any_text_is_a_valid_query_and_never_returns_deprecated(live_and_dead: Library, text: str) -> None:
    hits = live_and_dead.search(text)
    assert all(not h.deprecated and h.name != "dead-and" for h in hits)
    with_dep = live_and_dead.search(text, include_deprecated=True)
    assert len(with_dep) >= len(hits)
    assert [h.name for h in with_dep if h.deprecated] in ([], ["dead-and"])


def test_update_then_search_and_delete_keep_index_in_sync(clock: ManualClock) -> None:
    # The full-text index's own sync; semantic neighbours (issue 22) would add unrelated-word hits.
    mem_lib = Library(":memory:", clock=clock, settings=Settings(semantic=False))
    mem_lib.skills.add("s", "walrus migration", tags=["arctic"])
    mem_lib.memories.add("penguin colony notes", key="m")
    assert [h.name for h in mem_lib.search("walrus")] == ["s"]
    mem_lib.skills.update("s", description="narwhal tusk", tags=["ocean"])
    assert mem_lib.search("walrus") == []
    assert mem_lib.search("arctic") == []
    assert [h.name for h in mem_lib.search("narwhal ocean")] == ["s"]
    mem_lib.skills.update("s", name="renamed")
    assert [h.name for h in mem_lib.search("renamed")] == ["renamed"]
    mem_lib.memories.delete("m")
    assert mem_lib.search("penguin") == []
    mem_lib.skills.delete("renamed")
    assert mem_lib.search("narwhal") == []
    assert mem_lib.check() == []


def test_ties_break_by_id_deterministically(mem_lib: Library) -> None:
    for i in range(5):
        mem_lib.skills.add(f"twin-{i}", "identical description words")
    first = [h.id for h in mem_lib.search("identical words", kind="skill")]
    assert first == sorted(first)
    assert [h.id for h in mem_lib.search("identical words", kind="skill")] == first


def test_kinds_and_limit(mem_lib: Library) -> None:
    mem_lib.skills.add("postgres-backup", "backup postgres")
    mem_lib.memories.add("postgres rejects tls", key="pg")
    assert {h.kind for h in mem_lib.search("postgres")} == {"skill", "memory"}
    assert [h.kind for h in mem_lib.search("postgres", kind="memory")] == ["memory"]
    assert len(mem_lib.search("postgres", limit=1)) == 1
    assert mem_lib.search("postgres", limit=0) == []


def test_bm25_order_matches_rank_bm25_reference(clock: ManualClock) -> None:
    """An independent BM25 (rank-bm25, same k1/b, whole document as one field) ranks like FTS5.

    Words are chosen so stemming and stop words do not apply, and every query word is in under half
    of the documents so both IDF formulas agree. Lexical only: semantic neighbours (issue 22) are
    no part of BM25.
    """
    mem_lib = Library(":memory:", clock=clock, settings=Settings(semantic=False))
    rng = random.Random(7)
    vocab = [f"w{i}x" for i in range(60)]
    docs: list[list[str]] = []
    for i in range(200):
        words = [rng.choice(vocab) for _ in range(rng.randint(3, 15))]
        docs.append([f"skill{i}q", *words])
        mem_lib.skills.add(f"skill{i}q", " ".join(words))
    reference = BM25Okapi(docs, k1=1.2, b=0.75)
    for _ in range(20):
        query = rng.sample(vocab, 3)
        scores = reference.get_scores(query)
        expected = sorted(range(len(docs)), key=lambda d: (-scores[d], d))
        expected = [f"skill{d}q" for d in expected if scores[d] > 0][:10]
        got = [h.name for h in mem_lib.search(" ".join(query), kind="skill", limit=10)]
        assert got == expected, query


def test_every_rank_reports_each_skills_outcome_counters(tmp_path) -> None:
    """The lexical order shows the same uses/successes as the weighted one (it used to show 0/0),
    and with plasticity off (where every search is lexical) too; memories carry none."""
    path = tmp_path / "counts.db"
    with Library(path, clock=ManualClock(1_767_225_600.0), settings=Settings()) as lib:
        tried = lib.skills.add("csv-to-parquet", "convert csv files to parquet").id
        lib.skills.add("parquet-from-csv", "convert csv files to parquet with a schema")
        lib.memories.add("parquet needs an explicit csv schema", key="parquet-schema")
        for success in (True, True, False):
            lib.record_outcome(tried, success)
    for settings_ in (Settings(), Settings(dream_auto=False)):
        with Library(path, clock=ManualClock(1_767_225_600.0), settings=settings_, readonly=True) as lib:
            for rank in ("bm25", "weighted", "wilson"):
                hits = {(h.kind, h.name): (h.uses, h.successes) for h in lib.search("csv parquet", rank=rank)}
                assert hits == {
                    ("skill", "csv-to-parquet"): (3, 2),
                    ("skill", "parquet-from-csv"): (0, 0),
                    ("memory", "parquet-schema"): (0, 0),
                }, (rank, settings_.dream_auto)
