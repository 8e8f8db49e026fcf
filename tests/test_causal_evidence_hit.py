"""demo_causal_bench's CausalEval evidence-hit metric (issue 31 item 5): the key-token rule, the
strict-majority cover, the evidence-node set versus the answer node alone, and the k cut-off, on a
hand-made graph whose answers are known."""

from __future__ import annotations

import importlib.util
import sys

from kaos_dream.graph import Node

from .conftest import PROJECT_ROOT


def _bench():
    folder = PROJECT_ROOT / "demo_causal_bench"
    spec = importlib.util.spec_from_file_location("causal_bench_run", folder / "run.py")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(folder))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(folder))
    return module


BENCH = _bench()


def test_key_tokens_keep_long_words_and_drop_function_words() -> None:
    assert BENCH.key_tokens("Deployed WITHOUT running the test-suite, before lunch") == [
        "deployed", "running", "test", "suite", "lunch"]


def test_cover_needs_more_than_half_of_the_tokens() -> None:
    tokens = ["alpha", "bravo", "charlie", "delta"]
    assert not BENCH.covers("alpha and bravo", tokens)  # 2 of 4 is half, not more
    assert BENCH.covers("alpha, bravo and charlie", tokens)
    assert BENCH.covers("ALPHABRAVOCHARLIE", tokens)  # substrings, case folded
    assert not BENCH.covers("anything", [])


def _graph() -> list[dict]:
    texts = ["pointed dns at the new cluster early", "traffic failed over to nowhere",
             "automated the health gated switch", "unrelated bookkeeping chores"]
    nodes = [Node("memory", i + 1) for i in range(len(texts))]
    question = {"cls": "C7", "gold": nodes[2], "evidence": [nodes[2]], "text": "what now?",
                "bm25": [], "seeds": {}, "bm25_topk": [nodes[3], nodes[0], nodes[2]], "seeds_topk": {}}
    quoting = {"cls": "C2", "gold": nodes[1], "evidence": [nodes[0], nodes[1]], "text": "if dns again?",
               "bm25": [nodes[0]], "seeds": {}, "bm25_topk": [nodes[0], nodes[3]], "seeds_topk": {}}
    return [{"id": 0, "edges": None, "questions": [question, quoting],
             "text": dict(zip(nodes, texts, strict=True)), "role": {n: i for i, n in enumerate(nodes)}}]


def test_evidence_hits_count_any_evidence_node_within_k() -> None:
    graphs = _graph()
    at3 = BENCH.evidence_hits(graphs, "bm25", 1.0, k=3)
    assert at3["by_class"] == {"C2": "1/1", "C7": "1/1"} and at3["overall"] == "2/2"
    at2 = BENCH.evidence_hits(graphs, "bm25", 1.0, k=2)  # the correction is third: cut off
    assert at2["by_class"]["C7"] == "0/1"
    assert at2["missed_evidence_roles"] == {"C7": {"escalation": 1}}  # node index 2 is the escalation role
    # The answer node alone: C2's answer (node 1) is never retrieved, only its quoted cue (node 0).
    answer_only = BENCH.evidence_hits(graphs, "bm25", 1.0, k=3, answer_only=True)
    assert answer_only["by_class"]["C2"] == "0/1"
    # At the default threshold this C7 question retrieved nothing, so nothing can cover its evidence.
    assert BENCH.evidence_hits(graphs, "bm25", 1.0, k=3, topk=False)["by_class"]["C7"] == "0/1"
