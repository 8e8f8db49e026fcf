"""Issue 31: every hit carries a calibrated relevance, search can answer "nothing fits", and the
fused score keeps all of a candidate's evidence."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from kaos_dream import Library, ManualClock, Settings
from kaos_dream.agent_tools import search as tool_search
from kaos_dream.embedding.store import KindIndex
from kaos_dream.errors import InvalidInputError
from kaos_dream.search import relevance as rel
from kaos_dream.search import semantic
from kaos_dream.search.semantic import Fusion, SemanticMatches, Tier, combined, layout, strong_covers

from .conftest import T0

SKILLS = [
    ("backup-pg", "Back up the postgres database with pg_dump"),
    ("deploy-helm", "Deploy the service to the cluster with helm"),
    ("rotate-keys", "Rotate expired API keys and secrets"),
]


def _library(path: Path | str, settings: Settings | None = None) -> Library:
    lib = Library(path, clock=ManualClock(T0), settings=settings or Settings(strong_embedding_model="none"))
    for name, description in SKILLS:
        lib.skills.add(name, description)
    return lib


def test_every_hit_has_a_relevance_in_unit_range_and_an_exact_match_scores_high() -> None:
    with _library(":memory:") as lib:
        hits = lib.search("deploy the service to the cluster with helm", min_relevance=0.0)
        assert hits and all(0.0 <= h.relevance <= 1.0 for h in hits)
        assert hits[0].name == "deploy-helm" and hits[0].relevance > 0.9
        assert all(h.relevance < hits[0].relevance for h in hits[1:])


def test_a_query_nothing_answers_returns_no_hit_at_the_default_threshold() -> None:
    with _library(":memory:") as lib:
        assert lib.search("bake a chocolate cake") == []
        # a threshold of 0 keeps whatever candidates there were, each labelled with its low relevance
        assert all(h.relevance < 0.5 for h in lib.search("bake a chocolate cake", min_relevance=0.0))


def test_relevance_ignores_the_track_record_while_the_score_does_not() -> None:
    with _library(":memory:") as lib:
        query = "rotate the keys"
        before = {h.id: h for h in lib.search(query, min_relevance=0.0)}
        skill = lib.skills.get("rotate-keys")
        for _ in range(5):
            lib.record_outcome(skill.id, False)
        after = {h.id: h for h in lib.search(query, min_relevance=0.0)}
        assert after[skill.id].relevance == before[skill.id].relevance
        assert after[skill.id].score < before[skill.id].score


def test_threshold_drops_hits_below_it_and_bad_thresholds_are_refused() -> None:
    with _library(":memory:") as lib:
        every = lib.search("postgres keys helm", min_relevance=0.0)
        cut = sorted(h.relevance for h in every)[len(every) // 2]
        kept = lib.search("postgres keys helm", min_relevance=cut)
        assert [h.id for h in kept] == [h.id for h in every if h.relevance >= cut]
        for bad in (-0.1, 1.5, math.nan, "abc"):
            with pytest.raises(InvalidInputError, match="min relevance"):
                lib.search("postgres", min_relevance=bad)  # type: ignore[arg-type]


def test_the_settings_default_is_the_fitted_threshold_and_env_values_are_checked() -> None:
    assert Settings().min_relevance == rel.MIN_RELEVANCE
    assert Settings.from_env({"KAOS_MIN_RELEVANCE": "0.5"}).min_relevance == 0.5
    for bad in ("2", "-1", "nan", "x"):
        with pytest.raises(InvalidInputError, match="KAOS_MIN_RELEVANCE"):
            Settings.from_env({"KAOS_MIN_RELEVANCE": bad})


def test_relevance_curves() -> None:
    assert rel.relevance(1.0, None) > 0.95  # every query word held
    assert rel.relevance(0.0, None) < 0.01
    assert rel.relevance(0.0, 1.5) > 0.9  # a close paraphrase holding no word
    assert rel.relevance(0.0, -0.5) < 0.01
    # the semantic model reads cover too: of two hits with the same z, the one whose z owes part of
    # itself to shared words is less often the answer; holding every word still counts in full
    assert rel.relevance(0.5, 0.8) < rel.relevance(0.0, 0.8)
    assert rel.relevance(1.0, 0.0) == rel.relevance(1.0, None) > 0.95
    assert rel.relevance(0.0, 0.2) < rel.relevance(0.0, 0.5) < rel.relevance(0.0, 1.0) < rel.relevance(0.0, 3.0)
    assert rel.relevance(0.0, 9.0) == rel.relevance(0.0, 3.0)  # z clipped
    assert rel.relevance(0.0, float("nan")) == rel.relevance(0.0, None)


def test_cli_prints_nothing_and_one_stderr_line_when_nothing_fits(kaos, tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    for name, description in SKILLS:
        assert kaos("skill", "add", name, "-d", description, db=db).returncode == 0
    none = kaos("search", "bake a chocolate cake", db=db)
    assert none.returncode == 0 and none.stdout == ""
    assert none.stderr.strip().startswith("no confident match") and len(none.stderr.strip().splitlines()) == 1
    nothing = kaos("search", "!!! ???", db=db)
    assert nothing.returncode == 0 and nothing.stdout == "" and "no searchable word" in nothing.stderr
    as_json = kaos("--json", "search", "bake a chocolate cake", db=db)
    assert as_json.returncode == 0 and json.loads(as_json.stdout) == []
    tsv = kaos("search", "deploy with helm", "--format", "tsv", "--header", db=db)
    header, first = tsv.stdout.splitlines()[:2]
    columns = header.split("\t")
    assert "relevance" in columns and 0.9 < float(first.split("\t")[columns.index("relevance")]) <= 1.0
    hits = json.loads(kaos("--json", "search", "deploy with helm", "--min-relevance", "0", db=db).stdout)
    assert all(0.0 <= h["relevance"] <= 1.0 for h in hits) and hits[0]["name"] == "deploy-helm"
    for bad in ("2", "-0.5", "abc"):
        result = kaos("search", "helm", "--min-relevance", bad, db=db)
        assert result.returncode == 2 and "Traceback" not in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1


def test_mcp_search_tool_says_no_confident_match_in_a_field() -> None:
    with _library(":memory:") as lib:
        found = tool_search(lib, "deploy with helm")
        assert found["no_confident_match"] is False and found["results"][0]["relevance"] > 0.9
        empty = tool_search(lib, "bake a chocolate cake")
        assert empty["no_confident_match"] is True and empty["results"] == []
        assert empty["min_relevance"] == Settings().min_relevance


def _matches(ids: list[int], z: list[float], gate: float = 1.0) -> SemanticMatches:
    return SemanticMatches("skill", np.array(ids, dtype=np.int64), np.array(z), [], reference=4.0, weight=0.9,
                           gate=gate, strong_rows=0)


def test_fusion_keeps_a_lexical_matchs_cosine() -> None:
    m = _matches([1, 2, 3], [1.0, 0.0, 0.5])
    fused = m.fuse(np.array([0.2, 3.0, 0.0]), np.array([1, 2, 3]))
    # skill 1 matched one word (bm25 0.2) but its cosine is a full match: it keeps the semantic term
    # (plus the small share of z that orders ties past a full match)
    tie = semantic.TIE_SHARE * 4.0
    assert fused.tolist() == pytest.approx([0.9 * 4.0 * 1.0 + tie, 3.0, 0.9 * 4.0 * 0.5 + 0.5 * tie])
    # no semantic evidence (gate 0: the best lexical match holds the query): the lexical order stands
    assert _matches([1, 2, 3], [1.0, 0.0, 0.5], gate=0.0).fuse(
        np.array([0.2, 3.0, 0.0]), np.array([1, 2, 3])).tolist() == pytest.approx([0.2, 3.0, 0.0])


def test_neighbours_past_a_full_match_are_ordered_by_closeness_not_by_id() -> None:
    m = _matches([1, 2, 3], [1.2, 1.5, 0.3], gate=0.5)
    fused = m.fuse(np.zeros(3), np.array([1, 2, 3]))
    assert fused[1] > fused[0] > fused[2]  # both clip to a full match; the closer one (id 2) wins
    assert _matches([1, 2], [1.0, 5.0]).fuse(np.zeros(2), np.array([1, 2]))[1] == pytest.approx(
        0.9 * 4.0 + semantic.TIE_SHARE * 4.0 * semantic.Z_CAP)  # the extra share is capped


def test_a_blend_tier_mixes_the_fast_z_into_rows_holding_both_vectors() -> None:
    fast = _index([1, 2], seq=1, dim=4, seed=3)
    query = fast.matrix[0].copy()  # the fast tier sees row 1 as an exact match, z = (1 - 0.1) / 0.4
    fusion = semantic.Fusion(threshold=0.1, full=0.5)
    z_fast = fusion.scaled(fast.matrix.astype(np.float64) @ query.astype(np.float64))
    m = SemanticMatches("skill", np.array([1, 2, 3], dtype=np.int64), np.array([0.2, 0.4, 0.6]), [], reference=4.0,
                        weight=0.9, gate=1.0, strong_rows=3, blend=semantic.Tier(fast, query, fusion))
    got = m.scaled_of(np.array([1, 2, 3, 9]))
    assert got[:2] == pytest.approx((np.array([0.2, 0.4]) + semantic.FAST_BLEND * z_fast) / (1 + semantic.FAST_BLEND),
                                    abs=1e-6)
    assert got[2] == pytest.approx(0.6) and got[3] == -1.0  # no fast vector: strong alone; no vector: -1


def _index(ids: list[int], seq: int, dim: int = 4, seed: int = 0) -> KindIndex:
    rng = np.random.default_rng(seed)
    m = rng.standard_normal((len(ids), dim)).astype(np.float32)
    m /= np.linalg.norm(m, axis=1, keepdims=True)
    return KindIndex(seq, np.array(ids, dtype=np.int64), m, {i: n for n, i in enumerate(ids)})


def test_tier_layout_is_computed_once_per_index_pair_and_matches_the_union() -> None:
    fast, strong = _index([1, 2, 3, 5], 7), _index([2, 3, 4], 9, seed=1)
    ids, positions = layout([fast, strong])
    assert ids.tolist() == [1, 2, 3, 4, 5] and [p.tolist() for p in positions] == [[0, 1, 2, 4], [1, 2, 3]]
    again_ids, again_positions = layout([fast, strong])
    assert again_ids is ids and again_positions is positions  # cached: no per-query union
    q = np.ones(4, dtype=np.float32) / 2
    tiers = [Tier(fast, q, Fusion()), Tier(strong, q, Fusion())]
    got_ids, z, replaced = combined(tiers)
    expected = {int(i): float(v) for i, v in zip(fast.ids, Fusion().scaled(fast.matrix @ q), strict=True)}
    expected |= {int(i): float(v) for i, v in zip(strong.ids, Fusion().scaled(strong.matrix @ q), strict=True)}
    assert got_ids.tolist() == sorted(expected) and z.tolist() == pytest.approx([expected[i] for i in sorted(expected)])
    assert replaced == 3
    assert not strong_covers(strong, fast)
    assert strong_covers(_index([1, 2, 3, 4, 5], 10), fast)


def test_identifiers_are_split_into_words_for_the_embedders() -> None:
    from kaos_dream.embedding.store import skill_text
    from kaos_dream.tokens import identifier_words

    cases = {"craftCraftingTable": "craft crafting table", "git_status": "git status",
             "read_text_file": "read text file", "k8s.rollout.restart": "k8s rollout restart",
             "src/read_text_file.py": "src read text file py", "parseISODate": "parse iso date",
             "deploy-helm": "deploy helm"}
    for name, words in cases.items():
        assert identifier_words(name) == words
    assert skill_text("mineIronOre", "Mine it.", []).startswith("mine iron ore. ")
    assert identifier_words("a" * 100_000 + "B") == "a" * 100_000 + " b"  # linear on long input


def test_an_identifier_still_matches_exactly(tmp_path: Path) -> None:
    with _library(tmp_path / "k.db") as lib:
        lib.skills.add("craftCraftingTable", "Make a workbench from planks")
        hits = lib.search("craftCraftingTable")
        assert hits[0].name == "craftCraftingTable" and hits[0].relevance > 0.9
