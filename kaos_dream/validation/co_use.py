"""The co-use validator: does each skill the episode used belong with the others it used?

No LLM: it reads the co-activation counts earlier validated episodes left. Within one episode the
skills that belong together have been co-used often (the strongest pair among the others is the
episode's *cohesion*); a skill whose strongest co-use with any of them stays below ``threshold`` ×
that cohesion is the mark of an unrelated skill slipped into the session — the "silent" corruption
that outcome and grounding cannot see. The measure is relative to the episode's own pairs, so it
needs no per-skill totals and does not drift as rejected episodes accumulate. It judges a skill only
when the other skills' cohesion is at least ``MIN_COHESION`` co-uses; with fewer than three skills,
or no such history yet, it has nothing to check and is off for the episode.
"""

from __future__ import annotations

from itertools import combinations

from .base import QUALITY, ValidationContext, Verdict

MIN_COHESION = 5.0
MAX_SKILLS = 16  # an episode's first 16 skills (by id) are judged: at most 120 pairs read
DEFAULT_THRESHOLD = 0.15


def co_use(ctx: ValidationContext, threshold: float | None) -> Verdict:
    limit = DEFAULT_THRESHOLD if threshold is None else threshold
    skills = sorted(ctx.episode.skills)[:MAX_SKILLS]
    if len(skills) < 3:
        return Verdict("co_use", QUALITY, False, None, None, threshold, "fewer than three skills used")
    marks = ",".join("?" * len(skills))
    counts = {(int(a), int(b)): float(n) for a, b, n in ctx.lib.conn.execute(
        f"SELECT a_id, b_id, count FROM coactivations WHERE a_kind = 'skill' AND a_id IN ({marks}) "
        f"AND b_kind = 'skill' AND b_id IN ({marks})", (*skills, *skills))}
    pairs = {(a, b): counts.get((a, b), 0.0) for a, b in combinations(skills, 2)}
    worst: tuple[float, int, float] | None = None
    for x in skills:
        best = max(n for (a, b), n in pairs.items() if x in (a, b))
        cohesion = max(n for (a, b), n in pairs.items() if x not in (a, b))
        if cohesion < MIN_COHESION:
            continue
        ratio = min(1.0, best / cohesion)
        if worst is None or ratio < worst[0]:
            worst = (ratio, x, cohesion)
    if worst is None:
        return Verdict("co_use", QUALITY, False, None, None, threshold,
                       f"the skills used have fewer than {MIN_COHESION:g} co-uses with each other yet")
    ratio, skill, cohesion = worst
    if ratio >= limit:
        return Verdict("co_use", QUALITY, True, ratio, True, threshold,
                       f"every skill is co-used with the others (lowest {ratio:.2f} of the cohesion {cohesion:g})")
    row = ctx.lib.conn.execute("SELECT name FROM skills WHERE id = ?", (skill,)).fetchone()
    name = row[0] if row else f"#{skill}"
    return Verdict("co_use", QUALITY, True, ratio, False, threshold,
                   f"skill {name} is rarely co-used with the others ({ratio:.2f} of their {cohesion:g} co-uses)")
