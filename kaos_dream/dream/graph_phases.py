"""Built-in phases over episodes and the graph: replay, decay (LTD) and emergent edges."""

from __future__ import annotations

import heapq
import json
import math
import sqlite3
from operator import itemgetter
from typing import Any

from ..episode_cost import cost_per_success
from .phases import ORDER_DECAY, ORDER_EMERGENT, ORDER_REPLAY, DreamContext, PhaseResult, register_phase
from .state import current_cycle, set_state

TOP = 5


def ltd_loss(cycles: float, delta: float, tau: float) -> float:
    """Strength lost by an edge dormant for ``cycles`` dream cycles: δ(1 − e^(−c/τ))."""
    return delta * (1.0 - math.exp(-cycles / tau)) if cycles > 0 else 0.0


def emergent_strength(count: float, step: float, cap: float) -> float:
    """Initial strength of an emergent co_occurs_with edge: min(cap, step × count)."""
    return min(cap, step * count)


# -- replay ---------------------------------------------------------------------------------------
_OUTSIDE_SQL = "SELECT EXISTS (SELECT 1 FROM skill_uses WHERE created_at < ? OR created_at > ?)"
_WINDOW_SQL = ("SELECT skill_id, count(*), sum(success) FROM skill_uses WHERE created_at >= ? AND created_at <= ? "
               "GROUP BY skill_id ORDER BY skill_id")
_ALL_TIME_SQL = "SELECT skill_id, uses, successes FROM skill_stats WHERE uses > 0 ORDER BY skill_id"


def window_outcomes(conn: sqlite3.Connection, lo: float, hi: float) -> list[tuple[int, int, int]]:
    """(skill id, outcomes, successes) per skill with outcomes in [lo, hi], by skill id.

    Grouping the window's rows reads each row's ``success`` from the table: ~0.4 s at 500k outcomes.
    When no outcome lies outside the window (a first pass, whose window starts at 0) the answer is
    the trigger-kept counters in ``skill_stats`` (exact; `kaos db check` recounts them), and finding
    that out reads only the (skill_id, created_at) index: the EXISTS stops at the first outcome
    outside, so a narrow window (the usual later pass) costs one index step before its own query.
    """
    cursor = conn.cursor()
    cursor.row_factory = None  # plain tuples: one Row object per skill would cost more than the query
    if cursor.execute(_OUTSIDE_SQL, (lo, hi)).fetchone()[0]:
        return cursor.execute(_WINDOW_SQL, (lo, hi)).fetchall()
    return cursor.execute(_ALL_TIME_SQL).fetchall()


COST_GROUPS = 5  # skills and tasks the digest lists in its cost table


def replay(ctx: DreamContext, _: Any) -> PhaseResult:
    """Episodes ended in the window → the signals later phases and the digest use."""
    conn, lo, hi = ctx.conn, ctx.since, ctx.started_at
    states = {
        s: n
        for s, n in conn.execute(
            "SELECT state, count(*) FROM agents WHERE ended_at >= ? AND ended_at <= ? GROUP BY state ORDER BY state",
            (lo, hi),
        )
    }
    running = conn.execute("SELECT count(*) FROM agents WHERE state = 'running'").fetchone()[0]
    unprocessed = conn.execute(
        "SELECT count(*) FROM agents WHERE state != 'running' AND processed_at IS NULL"
    ).fetchone()[0]
    # The window's outcomes per skill: the totals, the hot list and the count of live skills used all
    # come from it. Names are read for the hot list only, deprecation from the (few) deprecated skills' ids.
    per_skill = window_outcomes(conn, lo, hi)
    uses = sum(map(itemgetter(1), per_skill))
    wins = sum(map(itemgetter(2), per_skill))
    top = heapq.nlargest(TOP, per_skill, key=itemgetter(1))  # stable: ties keep skill id order
    names = dict(conn.execute(
        "SELECT id, name FROM skills WHERE id IN (SELECT value FROM json_each(?))", (json.dumps([r[0] for r in top]),)
    ).fetchall())
    hot = [{"id": r[0], "name": names[r[0]], "uses": r[1], "successes": r[2]} for r in top if r[0] in names]
    live = conn.execute("SELECT count(*) FROM skills WHERE deprecated = 0").fetchone()[0]
    deprecated = {r[0] for r in conn.execute("SELECT id FROM skills WHERE deprecated = 1")}
    used_live = len(per_skill) - len(deprecated.intersection(map(itemgetter(0), per_skill)))
    never = [
        {"id": r[0], "name": r[1]}
        for r in conn.execute(
            "SELECT id, name FROM skills WHERE deprecated = 0 "
            "AND NOT EXISTS (SELECT 1 FROM skill_uses u WHERE u.skill_id = skills.id) ORDER BY id LIMIT ?",
            (TOP,),
        )
    ]
    hits = conn.execute(
        "SELECT count(*) FROM memory_hits WHERE created_at >= ? AND created_at <= ?", (lo, hi)
    ).fetchone()[0]
    hot_memories = [
        {"id": r[0], "key": r[1], "hits": r[2]}
        for r in conn.execute(
            "SELECT m.id, m.key, count(*) AS n FROM memory_hits h JOIN memories m ON m.id = h.memory_id "
            "WHERE h.created_at >= ? AND h.created_at <= ? GROUP BY m.id ORDER BY n DESC, m.id LIMIT ?",
            (lo, hi, TOP),
        )
    ]
    return PhaseResult({
        "episodes": states,
        "running": running,
        "unprocessed_episodes": unprocessed,
        "skill_uses": uses,
        "skill_successes": wins,
        "hot_skills": hot,
        "live_skills": live,
        "cold_skills": live - used_live,
        "never_used_examples": never,
        "memory_hits": hits,
        "hot_memories": hot_memories,
        # What a successful episode of the window cost (shown, never used to rank): episode_cost.py.
        "cost": cost_per_success(conn, lo, hi, limit=COST_GROUPS),
    })


# -- decay (LTD) ------------------------------------------------------------------------------------
def decay(ctx: DreamContext, _: Any) -> PhaseResult:
    """LTD for every live association edge that was not declared, above the floor; apply advances the
    cycle counter. ``caused``/``prevented`` edges are left to the graph's online learning, whose
    neglect rule already lowers the confidence of causal edges without new evidence: decaying them
    here too would forget them twice."""
    s = ctx.lib.settings
    conn = ctx.conn
    before = current_cycle(conn)
    rows = conn.execute(
        "SELECT id, strength, last_activated_cycle FROM edges "
        "WHERE pruned_at IS NULL AND provenance != 'declared' AND relation NOT IN ('caused', 'prevented') "
        "AND strength > ? ORDER BY id",
        (s.dream_strength_floor,),
    ).fetchall()
    changed = 0
    newly_at_floor = 0
    total_loss = 0.0
    updates: list[tuple[float, float, int]] = []
    if rows:
        import numpy as np  # here, not at import: only a dream pass needs it

        arr = np.asarray([(r[0], r[1], r[2]) for r in rows], dtype=np.float64)
        ids, strength, last = arr[:, 0].astype(np.int64), arr[:, 1], arr[:, 2]
        dormant = np.maximum(before - last, 0.0)
        loss = s.dream_ltd_delta * (1.0 - np.exp(-dormant / s.dream_ltd_tau))
        new = np.maximum(s.dream_strength_floor, strength - loss)
        moved = new < strength
        changed = int(moved.sum())
        newly_at_floor = int((moved & (new <= s.dream_strength_floor)).sum())
        total_loss = float((strength - new)[moved].sum())
        now = ctx.now()
        updates = [(float(v), now, int(i)) for v, i in zip(new[moved].tolist(), ids[moved].tolist(), strict=True)]
    cycle = before
    if ctx.apply:
        cycle = before + 1
        conn.executemany("UPDATE edges SET strength = ?, updated_at = ? WHERE id = ?", updates)
        set_state(conn, "cycle", cycle)
        conn.execute("UPDATE dream_runs SET cycle = ? WHERE id = ?", (cycle, ctx.run_id))
        ctx.cycle = cycle
    at_floor = conn.execute(
        "SELECT count(*) FROM edges WHERE pruned_at IS NULL AND provenance != 'declared' "
        "AND relation NOT IN ('caused', 'prevented') AND strength <= ?",
        (s.dream_strength_floor,),
    ).fetchone()[0]
    return PhaseResult({
        "applied": ctx.apply,
        "cycle": cycle,
        "edges_considered": len(rows),
        "edges_weakened": changed,
        "strength_lost": round(total_loss, 9),
        "newly_at_floor": newly_at_floor,
        "at_floor_total": at_floor if ctx.apply else at_floor + newly_at_floor,
    })


# -- emergent edges -------------------------------------------------------------------------------
_EMERGENT_SQL = """
SELECT c.a_kind, c.a_id, c.b_kind, c.b_id, c.count, c.last_at FROM coactivations c
WHERE c.count >= ?
  AND NOT EXISTS (SELECT 1 FROM edges e WHERE e.src_kind = c.a_kind AND e.src_id = c.a_id
                  AND e.dst_kind = c.b_kind AND e.dst_id = c.b_id)
  AND NOT EXISTS (SELECT 1 FROM edges e WHERE e.src_kind = c.b_kind AND e.src_id = c.b_id
                  AND e.dst_kind = c.a_kind AND e.dst_id = c.a_id)
  AND (c.a_kind != 'skill' OR EXISTS (SELECT 1 FROM skills s WHERE s.id = c.a_id AND s.deprecated = 0))
  AND (c.b_kind != 'skill' OR EXISTS (SELECT 1 FROM skills s WHERE s.id = c.b_id AND s.deprecated = 0))
  AND (c.a_kind != 'memory' OR EXISTS (SELECT 1 FROM memories m WHERE m.id = c.a_id))
  AND (c.b_kind != 'memory' OR EXISTS (SELECT 1 FROM memories m WHERE m.id = c.b_id))
ORDER BY c.a_kind, c.a_id, c.b_kind, c.b_id
"""


def emergent(ctx: DreamContext, _: Any) -> PhaseResult:
    """Pairs co-activated ≥ θ times with no edge either way get a co_occurs_with edge (canonical order)."""
    s = ctx.lib.settings
    found = []
    for a_kind, a_id, b_kind, b_id, count, last_at in ctx.conn.execute(_EMERGENT_SQL, (s.dream_emergent_min,)):
        if (a_kind, a_id) > (b_kind, b_id):
            a_kind, a_id, b_kind, b_id = b_kind, b_id, a_kind, a_id
        if (a_kind, a_id) == (b_kind, b_id):
            continue
        found.append((a_kind, a_id, b_kind, b_id, emergent_strength(count, s.dream_emergent_step, s.dream_emergent_cap),
                      count, last_at))
    created = 0
    if ctx.apply and found:
        now = ctx.now()
        cur = ctx.conn.executemany(
            "INSERT OR IGNORE INTO edges (src_kind, src_id, dst_kind, dst_id, relation, strength, activations, "
            "last_activated_cycle, last_activated_at, provenance, created_at, updated_at) "
            "VALUES (?, ?, ?, ?, 'co_occurs_with', ?, 0, ?, ?, 'emergent', ?, ?)",
            [(a, ai, b, bi, st, ctx.cycle, last, now, now) for a, ai, b, bi, st, _, last in found],
        )
        created = cur.rowcount
    from ..graph.nodes import Node, references

    top = found[:TOP]
    names = references(ctx.conn, {Node(k, i) for a, ai, b, bi, *_ in top for k, i in ((a, ai), (b, bi))})
    examples = [  # ids for programs, names (skill:deploy-friday) for the digest a person reads
        {"src": f"{a}:{ai}", "dst": f"{b}:{bi}", "src_name": names[Node(a, ai)], "dst_name": names[Node(b, bi)],
         "strength": st, "count": n}
        for a, ai, b, bi, st, n, _ in top
    ]
    return PhaseResult({"applied": ctx.apply, "candidates": len(found), "created": created, "examples": examples})


register_phase("replay", replay, order=ORDER_REPLAY)
register_phase("decay", decay, order=ORDER_DECAY)
register_phase("emergent", emergent, order=ORDER_EMERGENT)
