"""Causal evidence from ended episodes, as an episode-end hook.

* every skill the episode applied checks its ``caused`` / ``prevented`` predictions against the
  failures the episode recorded (:func:`observe`, closed world: a failure that happened is recorded,
  so an unrecorded one did not happen; a ``prevented`` edge learns only from a failure that did
  happen — absence is not taken as proof that it was prevented);
* a failed episode with fingerprints F adds first evidence for ``skill —caused→ F`` where no such
  edge exists yet (existing edges learned in the step above, so nothing is counted twice);
* a validated success adds ``memory —enabled→ skill`` for each cited memory and each applied skill.

Not registered on import: the lead wires it (``register()``) so it runs exactly once per episode,
beside the plasticity hooks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from ..hooks import EpisodeEnd, GateDecision, register_episode_end
from ..store.context import Context
from .learning import observe
from .nodes import Node
from .relations import PREDICTIVE

if TYPE_CHECKING:
    from .edges import Graph


class EvidenceHost(Context, Protocol):
    """The part of the library this hook reads and writes (a Library satisfies it)."""

    @property
    def graph(self) -> Graph: ...

HOOK_NAME = "graph.causal_evidence"


def record_episode_evidence(lib: EvidenceHost, episode: EpisodeEnd, decision: GateDecision) -> dict[str, int]:
    """Apply the rules above inside the caller's transaction; returns counts for logging."""
    failures = [Node("failure", f) for f in episode.failure_ids]
    skills = [Node("skill", s) for s in episode.skills]
    counts = {"predictions_checked": 0, "caused_created": 0, "enabled_evidence": 0}
    for skill in predicting_skills(lib, episode.skills):
        counts["predictions_checked"] += len(observe(lib, skill, happened=failures, closed_world=True).updates)
    if episode.state == "failed":
        for skill in skills:
            for failure in failures:
                if lib.graph.get(skill, "caused", failure, include_pruned=True) is None:
                    lib.graph.add_evidence(skill, "caused", failure)
                    counts["caused_created"] += 1
    if decision.passed and skills:
        for kind, ref in episode.citations:
            if kind != "memory":
                continue
            row = lib.conn.execute("SELECT id FROM memories WHERE key = ?", (ref,)).fetchone()
            if row is None and str(ref).isdigit():
                row = lib.conn.execute("SELECT id FROM memories WHERE id = ?", (int(ref),)).fetchone()
            if row is None:
                continue
            for skill in skills:
                lib.graph.add_evidence(Node("memory", int(row[0])), "enabled", skill)
                counts["enabled_evidence"] += 1
    return counts


def predicting_skills(lib: EvidenceHost, skill_ids: tuple[int, ...]) -> list[Node]:
    """The skills among ``skill_ids`` that have a live ``caused``/``prevented`` edge, in id order: one
    query for the whole episode, so skills that predict nothing (the common case) cost no
    :func:`observe` call of their own (which would find no edge to check and change nothing)."""
    if not skill_ids:
        return []
    marks = ",".join("?" * len(PREDICTIVE))
    rows = lib.conn.execute(
        f"SELECT src_id FROM edges WHERE src_kind = 'skill' AND src_id IN (SELECT value FROM json_each(?)) "
        f"AND relation IN ({marks}) AND pruned_at IS NULL",
        ("[" + ",".join(str(int(s)) for s in skill_ids) + "]", *PREDICTIVE),
    ).fetchall()
    return [Node("skill", i) for i in sorted({int(r[0]) for r in rows})]


def _hook(lib: EvidenceHost, episode: EpisodeEnd, decision: GateDecision) -> None:
    record_episode_evidence(lib, episode, decision)


def register(order: int = 200) -> None:
    """Run :func:`record_episode_evidence` at every episode end."""
    register_episode_end(HOOK_NAME, _hook, order=order)
