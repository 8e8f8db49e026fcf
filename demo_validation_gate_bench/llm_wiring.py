"""LLM wiring: the logical/alignment validators scoring and gating episodes, through the real Anthropic
SDK pointed at the local fake server of the test suite (``tests/fake_anthropic.py``).

This demonstrates the wiring — requests made, scores parsed, stored, and acted on by the gate — not
the quality of any model: the fake answers from a reply queue that the script fills, giving a low
logical score (0.2) to every corrupted episode's conclusion and 0.9 to honest ones, alignment 0.8,
novelty 0.4. The same plan is also replayed with no API key, where both LLM validators report "off".
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

from utility import GAP_S, T0, build, play, settings_without_llm, validator_map
from workload import KINDS, PlannedEpisode, make_library, plan_episodes

from kaos_dream import Library, ManualClock, Settings
from kaos_dream.validation.gate import stored_report

REPO = Path(__file__).resolve().parents[1]


def _fake_server() -> Any:
    sys.path.insert(0, str(REPO))  # tests/ is not installed: import the fake from this checkout
    from tests.fake_anthropic import FakeAnthropic, Reply

    return FakeAnthropic, Reply


def _replay(settings: Settings, seed: int, episodes: int, corruption: float,
            on_end: Any = None) -> tuple[dict[str, dict[str, int]], dict[str, Any]]:
    work = make_library(seed)
    plan = plan_episodes(work, seed, episodes, corruption)
    clock = ManualClock(T0)
    rejected = {k: 0 for k in ("honest", *KINDS)}
    total = dict(rejected)
    example: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp, Library(Path(tmp) / "llm.db", clock=clock, settings=settings) as lib:
        lib.preferences.set("scope", "stay within the topic of the task; do not mix unrelated procedures")
        _, by_name = build(lib, work)
        for ep in plan:
            row = play(lib, ep, by_name, "search", on_end)
            kind = ep.corruption or "honest"
            total[kind] += 1
            rejected[kind] += not row["learned"]
            if kind not in example:
                report = stored_report(lib.conn, row["agent"]) or {"validators": []}
                example[kind] = {
                    "agent": row["agent"], "passed": report.get("passed"), "trust": report.get("trust"),
                    "validators": validator_map(report),
                }
            clock.advance(GAP_S)
    return {"episodes": total, "rejected": rejected}, example


def run_llm_wiring(seed: int = 1, episodes: int = 60, corruption: float = 0.3) -> dict[str, Any]:
    fake_cls, reply = _fake_server()
    queries: list[str] = []
    with fake_cls() as fake:
        def queue_replies(ep: PlannedEpisode, agent: str, conclusion: str) -> None:
            queries.append(ep.query)
            low = ep.corruption is not None
            fake.queue(
                reply.json({"score": 0.2 if low else 0.9,
                            "reason": "mixes unrelated procedures" if low else "coherent with its sources"}),
                reply.json({"score": 0.8, "reason": "respects the stated scope"}),
                reply.json({"score": 0.4, "reason": "mostly restates its sources"}),
            )

        settings = Settings(anthropic_api_key="fake-key", llm_base_url=fake.base_url, llm_max_retries=0,
                            llm_timeout_s=5.0, dream_threshold=10**9)
        with_llm, example_llm = _replay(settings, seed, episodes, corruption, queue_replies)
        requests = fake.calls
        task_seen = _task_in_prompts(queries, [r["messages"][0]["content"] for r in fake.requests])
    without, example_off = _replay(settings_without_llm(), seed, episodes, corruption)
    return {
        "seed": seed,
        "episodes": episodes,
        "corruption": corruption,
        "fake_requests": requests,
        "expected_requests": 3 * episodes,
        "task_in_judge_prompts": task_seen,
        "expected_task_in_judge_prompts": 2 * episodes,
        "with_fake_llm": with_llm,
        "without_key": without,
        "example_with_fake_llm": example_llm,
        "example_without_key": example_off,
        "off_without_key": all(
            not ex["validators"][name]["enabled"] and ex["validators"][name]["reason"].startswith("off")
            for ex in example_off.values() for name in ("logical", "alignment")
        ),
        "note": "wiring demonstration: the fake's scores are scripted, so this says nothing about model quality",
    }


def _task_in_prompts(queries: list[str], prompts: list[str]) -> int:
    """How many logical/alignment prompts quote their episode's search query in the task block (the
    requests come three per episode, in episode order)."""
    seen = 0
    for i, query in enumerate(queries):
        for prompt in prompts[3 * i:3 * i + 3]:
            if '<data name="task">' in prompt:
                start = prompt.index('<data name="task">')
                seen += query in prompt[start:prompt.index("</data>", start)]
    return seen
