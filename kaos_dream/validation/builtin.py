"""The validators that need no LLM: outcome, grounding, co-use, and the heuristic novelty report."""

from __future__ import annotations

from ..tokens import content_tokens
from .base import QUALITY, REPORT, ValidationContext, Verdict, register_validator
from .co_use import DEFAULT_THRESHOLD as CO_USE_THRESHOLD
from .co_use import co_use


def outcome(ctx: ValidationContext, threshold: float | None) -> Verdict:
    """The episode's own result: only a completed episode passes."""
    completed = ctx.episode.state == "completed"
    return Verdict("outcome", QUALITY, True, 1.0 if completed else 0.0, completed, threshold,
                   f"episode {ctx.episode.state}")


def grounding(ctx: ValidationContext, threshold: float | None) -> Verdict:
    """Share of the cited skills and memories that exist and are live (not deprecated).

    An episode that cites nothing gives nothing to check: the validator is off for it (and says
    so) instead of scoring a vacuous 1.0.
    """
    if not ctx.cited:
        return Verdict("grounding", QUALITY, False, None, None, threshold, "no citations to check")
    live = [c for c in ctx.cited if c.live]
    score = len(live) / len(ctx.cited)
    limit = 0.7 if threshold is None else threshold
    missing = [f"{c.kind}:{c.ref}" for c in ctx.cited if not c.exists]
    dead = [f"{c.kind}:{c.ref}" for c in ctx.cited if c.exists and not c.live]
    parts = [f"{len(live)}/{len(ctx.cited)} citations live"]
    if missing:
        parts.append("missing " + ", ".join(missing[:5]))
    if dead:
        parts.append("deprecated " + ", ".join(dead[:5]))
    return Verdict("grounding", QUALITY, True, score, score >= limit, threshold, "; ".join(parts))


def novelty(ctx: ValidationContext, threshold: float | None) -> Verdict:
    """How much of the conclusion's vocabulary is not in the material it relied on.

    Reported beside trust, never part of it. The material is the cited items plus the skills and
    memories the episode used.
    """
    conclusion = ctx.episode.conclusion
    if not conclusion or not conclusion.strip():
        return Verdict("novelty", REPORT, False, None, None, threshold, "no conclusion to assess")
    words = set(content_tokens(conclusion))
    if not words:
        return Verdict("novelty", REPORT, False, None, None, threshold, "conclusion has no content words")
    material = " ".join(c.text for c in ctx.cited if c.exists)
    material += " " + used_material(ctx)
    known = set(content_tokens(material)) if material.strip() else set()
    new = sorted(words - known)
    score = len(new) / len(words)
    return Verdict("novelty", REPORT, True, score, None, threshold,
                   f"{len(new)}/{len(words)} conclusion words beyond the cited material")


def used_material(ctx: ValidationContext) -> str:
    conn = ctx.lib.conn
    texts: list[str] = []
    for skill_id in ctx.episode.skills:
        row = conn.execute("SELECT name, description, template FROM skills WHERE id = ?", (skill_id,)).fetchone()
        if row:
            texts.extend((row["name"], row["description"], row["template"]))
    for memory_id in ctx.episode.memories:
        row = conn.execute("SELECT key, content FROM memories WHERE id = ?", (memory_id,)).fetchone()
        if row:
            texts.extend((row["key"], row["content"]))
    return " ".join(texts)


def register_builtin() -> None:
    register_validator("outcome", outcome, kind=QUALITY, threshold=None, order=0)
    register_validator("grounding", grounding, kind=QUALITY, threshold=0.7,
                       threshold_setting="grounding_threshold", order=10)
    register_validator("co_use", co_use, kind=QUALITY, threshold=CO_USE_THRESHOLD,
                       threshold_setting="co_use_threshold", order=15)
    register_validator("novelty", novelty, kind=REPORT, threshold=None, order=90)
