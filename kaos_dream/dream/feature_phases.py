"""Dream phases contributed by other features: stale episodes, failure catch-up, policy mining, graph upkeep.

Each is a thin adapter from the dream's phase protocol to the feature's own library call, so the
logic stays with its feature and the dream only decides the order.
"""

from __future__ import annotations

from typing import Any

from ..store import transaction
from .phases import (
    ORDER_FAILURES,
    ORDER_POLICIES,
    ORDER_SPARSIFY,
    ORDER_STRONG_VECTORS,
    DreamContext,
    PhaseResult,
    register_phase,
)

RECURRING_SHOWN = 5


def _labelled(fp: dict[str, Any]) -> str:
    """A fingerprint's category, marked when a model's unreviewed diagnosis set it."""
    return f"{fp['category']} ({fp['source']})" if fp["source"].startswith("llm") else fp["category"]


def _md(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _section(title: str, lines: list[str]) -> str | None:
    body = "\n".join(lines).strip()
    return f"## {title}\n\n{body}" if body else None


def failures_phase(ctx: DreamContext, _: Any) -> PhaseResult:
    """Catch-up: re-diagnose ``unknown`` fingerprints with the current heuristics (idempotent; LLM
    diagnosis stays with `kaos dream recategorize`, so no model call holds the write lock), then
    report open alerts and the most recurring failures."""
    if ctx.conn.execute("SELECT 1 FROM failure_fingerprints LIMIT 1").fetchone() is None:
        # No failure recorded: nothing to re-diagnose, alert or list (alerts belong to fingerprints),
        # and the failures package (its compiled patterns, ~0.1 s a process) need not load.
        return PhaseResult({"applied": ctx.apply, "recategorized": 0, "open_alerts": 0, "recurring": 0,
                            "unknown": 0}, None)
    failures = ctx.lib.failures
    recategorized = failures.recategorize(use_llm=False) if ctx.apply else 0
    alerts = failures.active_alerts()
    recurring = failures.list(min_count=2, limit=RECURRING_SHOWN)
    unknown = ctx.conn.execute("SELECT count(*) FROM failure_fingerprints WHERE category = 'unknown'").fetchone()[0]
    lines: list[str] = []
    if alerts:
        lines.append("**Open systemic alerts** — check `kaos alerts check` before spawning agents:")
        lines += [
            f"- alert {a['id']}: fingerprint {a['fingerprint_id']} ({_md(a.get('tool', ''))}), "
            f"{a['agent_count']} agents, {a['status']} — `kaos dream systemic --ack {a['id']}`"
            for a in alerts
        ]
    if recurring:
        lines.append("")
        lines.append("| fingerprint | tool | category | seen | agents | fix |")
        lines.append("|---|---|---|---|---|---|")
        lines += [
            f"| {r['id']} | {_md(r['tool'])} | {_labelled(r)} | {r['occurrences']} | {r['agents']} | "
            f"{_md(r['fix_summary'] or '-')} |"
            for r in recurring
        ]
    if unknown:
        lines.append("")
        lines.append(f"{unknown} fingerprint(s) still `unknown`: `kaos dream recategorize` (uses the LLM when set).")
    summary = {"applied": ctx.apply, "recategorized": recategorized, "open_alerts": len(alerts),
               "recurring": len(recurring), "unknown": unknown}
    return PhaseResult(summary, _section("Failures", lines))


def policies_phase(ctx: DreamContext, _: Any) -> PhaseResult:
    """Mine the coordination log: a dry run proposes, an applying run enables; demotion in both."""
    report = ctx.lib.policies.mine(apply=ctx.apply)
    lines = []
    for label, ids in (("enabled", report.enabled), ("proposed", report.proposed), ("demoted", report.demoted)):
        for policy_id in ids:
            policy = ctx.lib.policies.get(policy_id)
            lines.append(f"- policy {policy_id} {label}: “{_md(policy.action_key)}” "
                         f"({policy.approval_rate:.0%} over {policy.support})")
    if report.proposed:
        lines.append("Enable a proposed policy with `kaos policy enable ID`.")
    return PhaseResult(report.to_dict(), _section("Policies", lines))


def graph_upkeep_prepare(ctx: DreamContext) -> None:
    """Import the graph's dream step before the phase takes the write lock (loading code under the
    lock made the writers beside the dream wait for it; issue 33 item 13)."""
    from ..graph import dream_phase  # noqa: F401


def graph_upkeep_phase(ctx: DreamContext, _: Any) -> PhaseResult:
    """Causal edges without new evidence lose confidence; weak, dormant, never-activated edges are
    pruned (reversibly) while retrieval on the recorded queries stays within ε."""
    from ..graph.dream_phase import graph_phase

    summary = graph_phase(ctx.lib, since=ctx.since, apply=ctx.apply, strategy="weight")
    pruned = summary.get("sparsify", {}).get("pruned", 0)
    digest = None
    if pruned:
        digest = _section("Graph upkeep", [
            f"{pruned} weak edge(s) pruned (reversible: `kaos graph pruned`, `kaos graph restore`)."])
    return PhaseResult(summary, digest)


register_phase("failures", failures_phase, order=ORDER_FAILURES, kinds=("run",))
register_phase("policies", policies_phase, order=ORDER_POLICIES, kinds=("run", "consolidate"))
register_phase("graph", graph_upkeep_phase, order=ORDER_SPARSIFY, prepare=graph_upkeep_prepare, kinds=("run",))


VECTOR_BACKFILL_LIMIT = 2000  # rows per kind a pass embeds with the fast model; the rest wait for the next pass
BACKFILL_COMMIT_ROWS = 128  # vectors one dream transaction stores at most (the backfills commit in chunks)


def vectors_prepare(ctx: DreamContext) -> int:
    """Embed rows that lack a current fast vector, up to :data:`VECTOR_BACKFILL_LIMIT` per kind,
    outside the write lock, and store them in bounded transactions (:func:`commit_backfill`); nothing
    when semantic search is off or in a dry run. Returns how many were written. The strong tier's
    identity is looked up here too, so the phase's summary imports nothing under the lock."""
    if not ctx.apply:  # a dry run loads neither the vectors nor a model
        return 0
    vectors = ctx.lib.vectors
    if vectors.embedder() is not None:
        vectors.strong_identity()
    return commit_backfill(ctx, vectors.fast_backfill_batch(VECTOR_BACKFILL_LIMIT))


def dry_vectors_summary(ctx: DreamContext) -> dict[str, Any]:
    """A dry run's vector phases: nothing is embedded, so neither the vectors (numpy) nor a model is
    loaded to count what a pass would embed (``kaos db info`` counts it); ``semantic`` says whether
    the fast tier's package is there, without loading it."""
    from ..embedding.packages import fast_tier_off

    settings = ctx.lib.settings
    return {"applied": False, "embedded": 0, "semantic": bool(settings.semantic) and not fast_tier_off(settings)}


def commit_backfill(ctx: DreamContext, batch: list[Any]) -> int:
    """Store a backfill's vectors in transactions of at most :data:`BACKFILL_COMMIT_ROWS` rows each,
    renewing the lease between them; returns how many were written.

    One transaction for the whole batch (up to 2,000 fast and 1,024 strong vectors) held the write
    lock for as long as writing all of them took; in chunks, no dream transaction stores more than
    :data:`BACKFILL_COMMIT_ROWS` vectors (issue 33 item 13). Each chunk is idempotent (a row whose
    text changed since it was embedded is skipped, one already done is no longer missing), so a
    pass killed between chunks keeps what committed and the resumed phase embeds only the rest."""
    written = 0
    for start in range(0, len(batch), BACKFILL_COMMIT_ROWS):
        with transaction(ctx.conn):
            written += ctx.lib.vectors.store_backfill(batch[start : start + BACKFILL_COMMIT_ROWS])
        ctx.heartbeat()
    return written


def vectors_phase(ctx: DreamContext, written: int) -> PhaseResult:
    """Backfill the fast tier's vectors of rows written while its model was missing (stored by the
    prepare step in bounded transactions: :func:`commit_backfill`)."""
    if not ctx.apply:
        return PhaseResult(dry_vectors_summary(ctx), None)
    vectors = ctx.lib.vectors
    fast = vectors.embedder()
    written = written if ctx.apply else 0
    summary: dict[str, Any] = {"applied": ctx.apply, "semantic": fast is not None, "embedded": written}
    if fast is not None:
        status = vectors.status()
        summary["missing_or_stale"] = sum(status[k]["missing"] + status[k]["stale"] for k in ("skill", "memory"))
    digest = _section("Semantic vectors", [f"{written} vector(s) backfilled."]) if written else None
    return PhaseResult(summary, digest)


def strong_vectors_prepare(ctx: DreamContext) -> int:
    """Embed up to ``strong_backfill_rows`` rows with the strong tier, outside the write lock and at
    the lowest CPU priority, and store them in bounded transactions (:func:`commit_backfill`);
    nothing when the tier is off or in a dry run. Returns how many vectors were written."""
    if not ctx.apply:
        return 0
    return commit_backfill(ctx, ctx.lib.vectors.strong_backfill_batch(ctx.lib.settings.strong_backfill_rows,
                                                                      between=ctx.heartbeat))


def strong_vectors_phase(ctx: DreamContext, written: int) -> PhaseResult:
    """The strong tier's backfill, a phase of its own: its cost is reported apart from the pass's steady
    work (it is one-time work per row: a library whose rows all have a strong vector pays only the
    lookup), and it runs after every phase that reads vectors, so nothing else in the pass depends on it."""
    if not ctx.apply:
        return PhaseResult(dry_vectors_summary(ctx), None)
    vectors = ctx.lib.vectors
    strong_id = vectors.strong_identity() if vectors.embedder() is not None else None
    written = written if ctx.apply else 0
    summary: dict[str, Any] = {"applied": ctx.apply, "on": strong_id is not None, "embedded": written,
                               "row_cap": ctx.lib.settings.strong_backfill_rows}
    if strong_id is not None:
        status = vectors.status()
        summary["model"] = strong_id[0]
        summary["missing"] = sum(status[k]["rows"] - status[k]["strong"] for k in ("skill", "memory"))
    lines = [f"{written} vector(s) computed by the strong tier ({strong_id[0] if strong_id else 'off'})"
             + (f"; {summary['missing']} row(s) still wait (`kaos db reindex` does them all at once)."
                if summary.get("missing") else ".")]
    return PhaseResult(summary, _section("Strong-tier vectors", lines) if written else None)


register_phase("vectors", vectors_phase, order=ORDER_FAILURES + 60, prepare=vectors_prepare, kinds=("run",))


def ann_prepare(ctx: DreamContext) -> dict[str, Any]:
    """Bring the saved ANN graphs up to date (issue 35), outside the write lock: built when missing
    (minutes at a million rows, once), otherwise caught up with the newer vectors and saved now and
    then. Nothing in a dry run, below ``ann_min_rows`` vectors or without the ``scale`` extra."""
    return ctx.lib.vectors.save_graphs() if ctx.apply else {}


def ann_phase(ctx: DreamContext, done: dict[str, Any]) -> PhaseResult:
    return PhaseResult({"applied": ctx.apply, "graphs": done}, None)


register_phase("ann", ann_phase, order=ORDER_STRONG_VECTORS + 50, prepare=ann_prepare, kinds=("run",))


STALE_SHOWN = 10  # stale episodes named in a pass's summary (the count is always exact)
STALE_CONCLUSION = "killed by the dream: still running {hours:g} h after it started (KAOS_EPISODE_STALE_AFTER_S)"


def leases_phase(ctx: DreamContext, _: Any) -> PhaseResult:
    """End the episodes whose client never came back. A running episode started more than
    ``KAOS_EPISODE_STALE_AFTER_S`` before the pass (the pass's clock, so a replayed pass decides the
    same) is marked ``killed`` and processed: a killed episode reinforces nothing, so no episode-end
    learning runs, and it stops counting against its principal's open episodes at once. A dry run
    only counts them. Oldest first, ties by id."""
    settings = ctx.lib.settings
    cutoff = ctx.started_at - settings.episode_stale_after_s
    ids = [str(r[0]) for r in ctx.conn.execute(
        "SELECT id FROM agents WHERE state = 'running' AND started_at < ? ORDER BY started_at, id", (cutoff,))]
    if ctx.apply and ids:
        conclusion = STALE_CONCLUSION.format(hours=round(settings.episode_stale_after_s / 3600, 2))
        ctx.conn.executemany(
            "UPDATE agents SET state = 'killed', ended_at = ?, conclusion = ?, processed_at = ? "
            "WHERE id = ? AND state = 'running'",
            [(ctx.started_at, conclusion, ctx.started_at, agent_id) for agent_id in ids])
    summary = {"applied": ctx.apply, "stale": len(ids), "killed": len(ids) if ctx.apply else 0,
               "episodes": ids[:STALE_SHOWN]}
    verb = "marked killed" if ctx.apply else "would be marked killed (dry run)"
    shown = ", ".join(_md(i) for i in ids[:STALE_SHOWN]) + (" …" if len(ids) > STALE_SHOWN else "")
    digest = _section("Stale episodes", [f"{len(ids)} episode(s) still running past the stale-after {verb}: {shown}"]
                      ) if ids else None
    return PhaseResult(summary, digest)


register_phase("leases", leases_phase, order=ORDER_FAILURES - 10, kinds=("run",))
register_phase("strong-vectors", strong_vectors_phase, order=ORDER_STRONG_VECTORS, prepare=strong_vectors_prepare,
               kinds=("run",))
