"""Drift workload: a team switches convention mid-run; how many outcomes until search follows?

Each task family has an old convention (skill A) and a new one (its sibling B). For ``pre_switch``
rounds A works for the family's task and everything else fails; then B works and everything else
(A included) fails, for ``post_switch`` rounds. A round gives every family one episode, in an order
shuffled by the seed. An episode is a real agent session: ``episodes.start``, ``search(query,
kind="skill", limit=5, record_hits=True, task=<family task>)``, a pick, ``record_outcome`` with the
family's task, then ``complete`` or ``fail``. The clock is injected (60 s per episode).

Agents pick ε-greedily (ε = 0.2: ``rng.random() < ε`` and more than one result → ``rng.choice``,
else the top hit), except in the ``explore`` arm, where they take the top hit of
``search(..., explore=True, seed=<drawn from the run's rng>)``.

After each post-switch outcome of a family, every query of that family is searched (limit 1, the
family's task, nothing recorded, no exploration). The family's *lag* is the number of its
post-switch outcomes after which top-1 is B for all its queries at every later check (0 when it
already was; ``None`` when it is not at the end). Regret is the number of failed outcomes.
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Callable
from typing import Any

from engines import SqliteTarget, Target, backfill_strong
from search_trace import Trace

from kaos_dream import Library, ManualClock, Settings

T0 = 1_767_225_600.0
EPISODE_GAP_S = 60.0

# arm -> (rank, evidence half-life or None for the default, agents explore)
ARMS: dict[str, tuple[str, float | None, bool]] = {
    "bm25": ("bm25", None, False),
    "wilson": ("wilson", None, False),
    "weighted_all_time": ("weighted", 0.0, False),
    "weighted": ("weighted", None, False),
    "weighted_explore": ("weighted", None, True),
}


def _settings(rank: str, half_life: float | None) -> Settings:
    return Settings(rank=rank) if half_life is None else Settings(rank=rank, evidence_half_life=half_life)


def _correct_for(lib: Library, family: dict[str, Any], name: str, trace: Trace | None = None) -> bool:
    correct = True
    for query in family["queries"]:
        top = lib.search(query, kind="skill", limit=1, task=family["task"])
        if trace is not None:
            trace.add(top)
        correct = correct and bool(top) and top[0].name == name
    return correct


def lag_of(checks: list[bool]) -> int | None:
    """Outcomes after which every later check holds (checks[k] is after k outcomes)."""
    if not checks or not checks[-1]:
        return None
    k = len(checks) - 1
    while k > 0 and checks[k - 1]:
        k -= 1
    return k


def run_drift(data: dict[str, Any], arm: str, seed: int, half_life: float | None = None,
              target: Target | None = None) -> dict[str, Any]:
    """One run of ``arm`` at ``seed``; ``half_life`` overrides the arm's evidence half-life (sweeps). The
    library is a fresh one of ``target`` (in-memory SQLite by default); ``trace`` holds every search's
    ranking, for comparing engines."""
    rank, arm_half_life, explore = ARMS[arm]
    protocol = data["protocol"]
    pre, post = int(protocol["pre_switch"]), int(protocol["post_switch"])
    epsilon, limit = float(protocol["epsilon"]), int(protocol["search_limit"])
    families = data["families"]
    rng = random.Random(seed)
    clock = ManualClock(T0)
    settings = _settings(rank, arm_half_life if half_life is None else half_life)
    checks: dict[str, list[bool]] = {f["task"]: [] for f in families}
    regret = {"pre_switch": 0, "post_switch": 0}
    episode = 0
    trace = Trace()
    with (target or SqliteTarget()).library(clock, settings) as lib:
        with lib.transaction():
            for family in families:
                for skill in family["skills"]:
                    lib.skills.add(skill["name"], skill["description"])
            for skill in data.get("filler", []):
                lib.skills.add(skill["name"], skill["description"])
        backfill_strong(lib)
        seen = {f["task"]: 0 for f in families}
        for round_ in range(pre + post):
            switched = round_ >= pre
            if round_ == pre:
                for family in families:
                    checks[family["task"]].append(_correct_for(lib, family, family["new"], trace))
            order = list(range(len(families)))
            rng.shuffle(order)
            for fi in order:
                family = families[fi]
                clock.advance(EPISODE_GAP_S)
                query = family["queries"][seen[family["task"]] % len(family["queries"])]
                seen[family["task"]] += 1
                agent = lib.episodes.start(f"drift-{episode:05d}").id
                episode += 1
                if explore:
                    results = lib.search(query, kind="skill", limit=limit, record_hits=True, agent=agent,
                                         task=family["task"], explore=True, seed=rng.randrange(2**32))
                    pick = results[0] if results else None
                    trace.add(results)
                else:
                    results = lib.search(query, kind="skill", limit=limit, record_hits=True, agent=agent,
                                         task=family["task"])
                    trace.add(results)
                    pick = None
                    if results:
                        pick = rng.choice(results) if rng.random() < epsilon and len(results) > 1 else results[0]
                works = family["new"] if switched else family["old"]
                ok = pick is not None and pick.name == works
                if pick is not None:
                    lib.record_outcome(pick.id, ok, agent=agent, task=family["task"])
                (lib.episodes.complete if ok else lib.episodes.fail)(agent)
                regret["post_switch" if switched else "pre_switch"] += not ok
                if switched:
                    checks[family["task"]].append(_correct_for(lib, family, family["new"], trace))
        final = {f["task"]: _correct_for(lib, f, f["new"], trace) for f in families}
    at = {str(c): {task: checks[task][c] for task in checks} for c in protocol["checkpoints"]}
    return {
        "lag": {task: lag_of(c) for task, c in checks.items()},
        "top1_at_checkpoints": {c: sum(v.values()) / len(v) for c, v in at.items()},
        "final_top1": round(sum(final.values()) / len(final), 4),
        "regret": regret,
        "trace": trace,
    }


def _stats(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def _run_on_sqlite(data: dict[str, Any], arm: str, seed: int, half_life: float | None) -> dict[str, Any]:
    out = run_drift(data, arm, seed, half_life)
    del out["trace"]
    return out


def drift_summary(data: dict[str, Any], arm: str, seeds: list[int], half_life: float | None = None,
                  run: Callable[[dict[str, Any], str, int, float | None], dict[str, Any]] = _run_on_sqlite,
                  ) -> dict[str, Any]:
    """Median and spread over seeds: per-task lag (a run that never follows counts as post_switch + 1
    in the statistics and is also counted), final top-1, top-1 at each checkpoint, regret. ``run``
    makes one run (run.py's routes it through every engine it compares)."""
    runs = [run(data, arm, s, half_life) for s in seeds]
    never = int(data["protocol"]["post_switch"]) + 1
    tasks = list(runs[0]["lag"])
    lag = {}
    for task in tasks:
        values = [r["lag"][task] for r in runs]
        lag[task] = {**_stats([never if v is None else v for v in values]),
                     "never_followed": sum(v is None for v in values)}
    checkpoints = {c: _stats([r["top1_at_checkpoints"][c] for r in runs]) for c in runs[0]["top1_at_checkpoints"]}
    return {
        "seeds": seeds,
        "lag": lag,
        "worst_task_lag_median": statistics.median(max(lag_v) for lag_v in
                                                  ([never if r["lag"][t] is None else r["lag"][t] for t in tasks]
                                                   for r in runs)),
        "final_top1": _stats([r["final_top1"] for r in runs]),
        "top1_at_checkpoints": checkpoints,
        "regret_post_switch": _stats([r["regret"]["post_switch"] for r in runs]),
        "regret_total": _stats([r["regret"]["pre_switch"] + r["regret"]["post_switch"] for r in runs]),
        "per_seed": {str(s): r for s, r in zip(seeds, runs, strict=True)},
    }


def drift_goal(summary: dict[str, Any], median_goal: float, worst_goal: float) -> bool:
    """Every task: median lag over seeds <= median_goal, worst seed <= worst_goal, and top-1 on the new
    convention at every checkpoint of every seed (it stays there)."""
    lags_ok = all(v["median"] <= median_goal and v["max"] <= worst_goal and v["never_followed"] == 0
                  for v in summary["lag"].values())
    stays = all(c["min"] == 1.0 for c in summary["top1_at_checkpoints"].values())
    return lags_ok and stays
