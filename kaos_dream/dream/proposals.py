"""Promote / prune / merge proposals: found from telemetry, reconciled idempotently, applied on --apply.

Identity is (kind, targets): ``memory:ID`` for promote, ``skill:ID`` for prune, ``skill:A,skill:B``
(A < B) for merge. ``fingerprint`` hashes the targets' content (memory key and text; skill name,
description, template), so:
* a pending proposal is never duplicated; one whose targets changed is ``superseded`` (and proposed
  afresh if it still qualifies); one that no longer qualifies is ``superseded`` too;
* a rejected proposal comes back only when its targets' content changed;
* a memory is promoted at most once, ever; a pruned skill that a person restores is not proposed for
  pruning again until it is edited.
Merges are never applied here: they wait for `kaos dream merges --accept`. Promotions wait the same
way (`kaos dream promotions --accept`) unless ``KAOS_DREAM_AUTO_PROMOTE`` is on: a skill is
instructions other agents execute.

No agent rewrites the library alone: a prune needs at least ``KAOS_DREAM_PRUNE_MIN_AGENTS``
distinct *principals* (who writes: the identity an MCP server or the CLI runs as, not the episode
id a client picks, so one client that opens many episodes is still one vote) whose *own* outcomes
fail it by the prune rule — one hostile principal's failures, however many and over however many
episodes, are one vote, and honest principals that succeed with the skill do not vote for it — and
(when more than one is required) the rule must still hold with the outcomes of the principal that
reported the most failures left out, so one principal cannot tip the rate for others' occasional
failures either; a promotion needs hits from ``KAOS_DREAM_PROMOTE_MIN_AGENTS`` distinct principals,
and towards ``KAOS_DREAM_PROMOTE_HITS`` each principal counts at most its share of it (the threshold
over the principals needed, rounded up), so one principal's flood cannot tip others' incidental hits.
Outcomes and hits recorded without an agent count towards the totals but vote for nobody; an
episode written before principals were recorded counts as its own principal. Each proposal's
evidence names the principals and their episodes.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..names import confusable_skeleton
from ..skills import MAX_NAME
from ..store.lookalikes import fill_skeletons
from ..tokens import identifier_index_words
from .phases import MAX_ROWS_PER_TRANSACTION, ORDER_PROPOSALS, DreamContext, PhaseResult, register_phase

KINDS = ("promote", "prune", "merge")
_EPS = 1e-9
SHOWN_AGENTS = 10  # agent ids kept in a proposal's evidence (the count is always exact)


def fingerprint(*parts: str) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode("utf-8", "surrogatepass"))
        h.update(b"\x00")
    return h.hexdigest()[:16]


@dataclass(frozen=True)
class Candidate:
    kind: str
    targets: str
    fingerprint: str
    score: float
    evidence: dict[str, Any]
    rationale: str


def _whose(agents: list[str]) -> str:
    shown = ", ".join(agents[:SHOWN_AGENTS])
    return shown + (f", … ({len(agents) - SHOWN_AGENTS} more)" if len(agents) > SHOWN_AGENTS else "")


# Who votes: an episode's principal; an episode from before principals were recorded is its own.
VOTER = "coalesce(a.principal, 'episode:' || a.id)"


# A memory's hits per voter (NULL: hits recorded without an agent, one group of their own).
_PROMOTE_SQL = f"""
SELECT m.id, m.key, m.kind, m.content, sum(g.n) AS hits, sum(min(g.n, :share)) AS counted, count(g.who) AS voters
FROM (SELECT h.memory_id, {VOTER} AS who, count(*) AS n FROM memory_hits AS h LEFT JOIN agents AS a ON a.id = h.agent_id
      GROUP BY h.memory_id, {VOTER}) AS g
JOIN memories AS m ON m.id = g.memory_id
GROUP BY m.id HAVING sum(min(g.n, :share)) >= :min_hits AND count(g.who) >= :min_agents ORDER BY m.id
"""


def promote_share(min_hits: int, min_agents: int) -> int:
    """The most hits one principal adds towards the promotion threshold: its share of it, rounded up."""
    return -(-min_hits // max(1, min_agents))


def promote_candidates(conn: sqlite3.Connection, min_hits: int, min_agents: int = 1) -> list[Candidate]:
    """Memories retrieved by ``min_agents`` distinct principals, ``min_hits`` times counting at most
    :func:`promote_share` hits from each: the threshold is reached by breadth, so one principal's
    flood cannot tip two honest principals' incidental hits into a promotion."""
    out = []
    share = promote_share(min_hits, min_agents)
    for mid, key, kind, content, hits, counted, _ in conn.execute(
        _PROMOTE_SQL, {"share": share, "min_hits": min_hits, "min_agents": min_agents}
    ):
        principals = [r[0] for r in conn.execute(
            f"SELECT DISTINCT {VOTER} FROM memory_hits AS h JOIN agents AS a ON a.id = h.agent_id "
            "WHERE h.memory_id = ? ORDER BY 1", (mid,))]
        agents = [r[0] for r in conn.execute(
            "SELECT DISTINCT agent_id FROM memory_hits WHERE memory_id = ? AND agent_id IS NOT NULL ORDER BY agent_id",
            (mid,))]
        out.append(Candidate(
            "promote", f"memory:{mid}", fingerprint(key, kind, content), float(hits),
            {"memory_id": mid, "key": key, "hits": int(hits), "counted_hits": int(counted),
             "principal_count": len(principals), "principals": principals[:SHOWN_AGENTS],
             "agent_count": len(agents), "agents": agents[:SHOWN_AGENTS]},
            f"memory {key!r} was retrieved {int(hits)} times ({int(counted)} counted, at most {share} per principal; "
            f"threshold {min_hits}) by {len(principals)} principals ({_whose(principals)}) in {len(agents)} "
            f"episodes ({_whose(agents)}): make it a skill",
        ))
    return out


def _holds_without_loudest(conn: sqlite3.Connection, skill_id: int, uses: int, wins: int, max_success: float) -> bool:
    """The prune rule on the outcomes of everyone but the principal with the most failures (ties: lowest)."""
    per = conn.execute(
        f"SELECT {VOTER}, count(*), sum(u.success) FROM skill_uses AS u JOIN agent_keys AS k ON k.id = u.agent_key "
        "JOIN agents AS a ON a.id = k.agent_id "
        f"WHERE u.skill_id = ? GROUP BY {VOTER} ORDER BY count(*) - sum(u.success) DESC, 1 LIMIT 1",
        (skill_id,)).fetchone()
    rest_n, rest_w = (uses - per[1], wins - per[2]) if per is not None else (uses, wins)
    return rest_n > 0 and rest_w <= max_success * rest_n + _EPS


# The overall rule is read from the trigger-kept counters (skill_stats: exact, `kaos db check`
# recounts them), so only the few skills that fail it have their outcome rows grouped by agent;
# grouping all of skill_uses first cost 0.74 s at 500k outcomes.
_PRUNE_SQL = """
WITH failing AS MATERIALIZED (
    SELECT st.skill_id, st.uses, st.successes FROM skill_stats AS st JOIN skills AS s ON s.id = st.skill_id
    WHERE s.deprecated = 0 AND st.uses > 0 AND st.uses >= :min_uses AND st.successes <= :rate * st.uses + :eps
)
SELECT * FROM (
    SELECT s.id, s.name, s.description, s.template, f.uses, f.successes,
           (SELECT count(*) FROM (SELECT sum(u.success) AS w, count(*) AS n FROM skill_uses AS u
                                  JOIN agent_keys AS k ON k.id = u.agent_key JOIN agents AS a ON a.id = k.agent_id
                                  WHERE u.skill_id = f.skill_id GROUP BY {voter}) AS v
            WHERE w <= :rate * n + :eps) AS voters
    FROM failing AS f JOIN skills AS s ON s.id = f.skill_id
) AS c
WHERE voters >= :min_agents
ORDER BY id
""".replace("{voter}", VOTER)


def prune_candidates(
    conn: sqlite3.Connection, min_uses: int, max_success: float, min_agents: int = 1
) -> list[Candidate]:
    """Skills failing the prune rule overall *and* by the own outcomes of ``min_agents`` distinct agents."""
    out = []
    for sid, name, desc, template, uses, wins, voters in conn.execute(_PRUNE_SQL, {
        "rate": max_success, "eps": _EPS, "min_uses": min_uses, "min_agents": min_agents}):
        if min_agents > 1 and not _holds_without_loudest(conn, sid, uses, wins, max_success):
            continue
        principals = [r[0] for r in conn.execute(
            f"SELECT {VOTER} FROM skill_uses AS u JOIN agent_keys AS k ON k.id = u.agent_key "
            f"JOIN agents AS a ON a.id = k.agent_id WHERE u.skill_id = ? GROUP BY {VOTER} "
            "HAVING sum(u.success) <= ? * count(*) + ? ORDER BY 1",
            (sid, max_success, _EPS))]
        voting = set(principals)
        agents = [r[0] for r in conn.execute(
            f"SELECT k.agent_id, {VOTER} FROM skill_uses AS u JOIN agent_keys AS k ON k.id = u.agent_key "
            "JOIN agents AS a ON a.id = k.agent_id WHERE u.skill_id = ? GROUP BY k.agent_id, a.id ORDER BY k.agent_id",
            (sid,)) if r[1] in voting]
        rate = wins / uses
        out.append(Candidate(
            "prune", f"skill:{sid}", fingerprint(name, desc, template), rate,
            {"skill_id": sid, "name": name, "uses": uses, "successes": wins, "principal_count": int(voters),
             "principals": principals[:SHOWN_AGENTS], "agent_count": len(agents), "agents": agents[:SHOWN_AGENTS]},
            f"skill {name!r} succeeded {wins}/{uses} times ({rate:.0%} <= {max_success:.0%}), failing for "
            f"{int(voters)} principals ({_whose(principals)}) in {len(agents)} episodes ({_whose(agents)}): "
            "deprecate it",
        ))
    return out


def merge_candidates(conn: sqlite3.Connection, threshold: float) -> list[Candidate]:
    from .similarity import similar_row_pairs  # numpy-based: imported by a dream pass, not by every command

    cursor = conn.cursor()
    cursor.row_factory = None  # plain tuples: a Row object per skill costs more than the join's own work
    rows = cursor.execute("SELECT id, name, description FROM skills WHERE deprecated = 0 ORDER BY id").fetchall()
    out = []
    for i, j, sim in similar_row_pairs(rows, threshold):
        (a, na, da), (b, nb, db) = rows[i], rows[j]
        out.append(Candidate(
            "merge", f"skill:{a},skill:{b}", fingerprint(na, da, nb, db), round(sim, 6),
            {"skills": [a, b], "names": [na, nb], "jaccard": round(sim, 6)},
            f"skills {na!r} and {nb!r} share {sim:.0%} of their name/description tokens: merge them?",
        ))
    return out


def without_pruned(merges: list[Candidate], prunes: list[Candidate]) -> list[Candidate]:
    """The merges that touch no skill proposed for pruning: one pass never proposes both for a skill
    (accepting the merge after the prune was applied would fail). The prune wins: it rests on the
    skill's own outcomes, the merge only on its wording."""
    pruned = {c.targets for c in prunes}
    return [m for m in merges if not pruned.intersection(m.targets.split(","))]


def find_candidates(ctx: DreamContext) -> dict[str, list[Candidate]]:
    """Read-only (runs outside the write transaction)."""
    s = ctx.lib.settings
    prune = prune_candidates(ctx.conn, s.dream_prune_min_uses, s.dream_prune_max_success, s.dream_prune_min_agents)
    return {
        "promote": promote_candidates(ctx.conn, s.dream_promote_hits, s.dream_promote_min_agents),
        "prune": prune,
        "merge": without_pruned(merge_candidates(ctx.conn, s.dream_merge_jaccard), prune),
    }


def supersede(conn: sqlite3.Connection, proposal_id: int, now: float, reason: str) -> None:
    conn.execute(
        "UPDATE proposals SET status = 'superseded', decided_at = ?, reason = ? WHERE id = ? AND status = 'pending'",
        (now, reason, proposal_id),
    )


def reconcile(
    conn: sqlite3.Connection, kind: str, found: list[Candidate], run_id: int | None, now: float,
    between: Callable[[], None] = lambda: None,
) -> dict[str, int]:
    """Make the pending proposals of ``kind`` match ``found``; returns counts (created, superseded, …).
    New proposals are inserted :data:`MAX_ROWS_PER_TRANSACTION` at a time with ``between()`` (the
    dream's ``yield_lock``) between two chunks: 273 near-identical skills made 37,128 merge proposals
    that one transaction held the lock 2.3 s to write. A pass killed between chunks resumes to the
    same proposals (the committed ones are pending with the same fingerprint: kept)."""
    current = {c.targets: c for c in found}
    pending = {t: (pid, fp) for pid, t, fp in conn.execute(
        "SELECT id, targets, fingerprint FROM proposals WHERE kind = ? AND status = 'pending'", (kind,))}
    history: dict[str, set[tuple[str, str]]] = {}
    for t, fp, status in conn.execute(
        "SELECT targets, fingerprint, status FROM proposals WHERE kind = ? AND status IN ('rejected', 'applied')",
        (kind,),
    ):
        history.setdefault(t, set()).add((status, fp))
    counts = {"created": 0, "superseded": 0, "kept": 0, "suppressed": 0}
    for targets, (pid, fp) in sorted(pending.items(), key=lambda kv: kv[1][0]):
        cand = current.get(targets)
        if cand is None:
            supersede(conn, pid, now, "no longer qualifies")
            counts["superseded"] += 1
        elif cand.fingerprint != fp:
            supersede(conn, pid, now, "its targets changed")
            counts["superseded"] += 1
            del pending[targets]
        else:
            counts["kept"] += 1
    rows = []
    for targets, cand in current.items():
        if targets in pending:
            continue
        past = history.get(targets, set())
        if (
            ("rejected", cand.fingerprint) in past
            or (kind == "promote" and any(st == "applied" for st, _ in past))
            or (kind == "prune" and ("applied", cand.fingerprint) in past)
        ):
            counts["suppressed"] += 1
            continue
        rows.append(cand)
    for start in range(0, len(rows), MAX_ROWS_PER_TRANSACTION):
        if start:
            between()
        conn.executemany(
            "INSERT INTO proposals (kind, targets, fingerprint, score, evidence, rationale, run_id, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [(kind, c.targets, c.fingerprint, c.score, json.dumps(c.evidence, sort_keys=True), c.rationale, run_id,
              now) for c in rows[start : start + MAX_ROWS_PER_TRANSACTION]],
        )
    counts["created"] = len(rows)
    return counts


def _promoted_name(conn: sqlite3.Connection, key: str, memory_id: int) -> tuple[str, str]:
    """A free name for the promoted skill and its skeleton: none taken, none a look-alike of a taken one."""
    fill_skeletons(conn)
    for name in (f"promoted-{key}", f"promoted-{key}-{memory_id}"):
        name = name[:MAX_NAME]
        skeleton = confusable_skeleton(name)
        taken = conn.execute("SELECT 1 FROM skills WHERE name = ? OR name_skeleton = ?", (name, skeleton)).fetchone()
        if taken is None:
            return name, skeleton
    name = f"promoted-memory-{memory_id}"
    return name, confusable_skeleton(name)


def promote_memory(conn: sqlite3.Connection, proposal_id: int, memory_id: int, now: float) -> dict[str, Any] | None:
    """Make the memory of a promote proposal a skill; None (and the proposal superseded) if it is gone."""
    mem = conn.execute("SELECT id, key, kind, content FROM memories WHERE id = ?", (memory_id,)).fetchone()
    if mem is None:
        supersede(conn, proposal_id, now, "the memory was deleted")
        return None
    name, skeleton = _promoted_name(conn, mem["key"], mem["id"])
    cur = conn.execute(
        "INSERT INTO skills (name, name_words, name_skeleton, description, template, tags, created_at, updated_at) "
        "VALUES (?, ?, ?, ?, '', ?, ?, ?)",
        (name, identifier_index_words(name), skeleton, mem["content"], json.dumps(["promoted", mem["kind"]]), now,
         now),
    )
    return {"skill_id": cur.lastrowid, "name": name}


def apply_pending(ctx: DreamContext) -> dict[str, int]:
    """Apply every pending prune proposal, and promote ones when ``KAOS_DREAM_AUTO_PROMOTE`` is on (inside
    the phase's transaction); otherwise promotions wait for `kaos dream promotions --accept`."""
    conn, now = ctx.conn, ctx.now()
    done = {"promoted": 0, "pruned": 0}
    kinds = ("promote", "prune") if ctx.lib.settings.dream_auto_promote else ("prune",)
    for pid, kind, targets in conn.execute(
        f"SELECT id, kind, targets FROM proposals WHERE status = 'pending' AND kind IN ({', '.join('?' * len(kinds))})"
        " ORDER BY id", kinds,
    ).fetchall():
        target_id = int(targets.split(":")[1])
        if kind == "promote":
            promoted = promote_memory(conn, pid, target_id, now)
            if promoted is None:
                continue
            result = promoted
            done["promoted"] += 1
        else:
            skill = conn.execute("SELECT id, name, deprecated FROM skills WHERE id = ?", (target_id,)).fetchone()
            if skill is None or skill["deprecated"]:
                supersede(conn, pid, now, "the skill was deleted or deprecated")
                continue
            ev = json.loads(conn.execute("SELECT evidence FROM proposals WHERE id = ?", (pid,)).fetchone()[0])
            whose = f" failing for {ev['agent_count']} agents ({_whose(ev['agents'])})" if "agents" in ev else ""
            reason = (f"pruned by dream proposal {pid}: {ev['successes']}/{ev['uses']} successes{whose}; "
                      f"undo with `kaos skill restore {target_id}`")
            conn.execute(
                "UPDATE skills SET deprecated = 1, deprecated_reason = ?, deprecated_at = ?, updated_at = ? "
                "WHERE id = ?",
                (reason, now, now, target_id),
            )
            result = {"skill_id": target_id}
            done["pruned"] += 1
        conn.execute(
            "UPDATE proposals SET status = 'applied', decided_at = ?, result = ?, reason = ? WHERE id = ?",
            (now, json.dumps(result, sort_keys=True), f"applied by dream run {ctx.run_id}", pid),
        )
    return done


def proposals_phase(ctx: DreamContext, found: dict[str, list[Candidate]]) -> PhaseResult:
    now = ctx.now()
    summary: dict[str, Any] = {"applied": ctx.apply}
    for kind in KINDS:
        summary[kind] = reconcile(ctx.conn, kind, found[kind], ctx.run_id, now, ctx.yield_lock)
        summary[kind]["qualifying"] = len(found[kind])
    if ctx.apply:
        summary.update(apply_pending(ctx))
    pending = {
        k: n for k, n in ctx.conn.execute(
            "SELECT kind, count(*) FROM proposals WHERE status = 'pending' GROUP BY kind ORDER BY kind")
    }
    summary["pending"] = pending
    summary["pending_merges"] = [
        {"id": r[0], "targets": r[1], "score": r[2], "rationale": r[3], "names": _target_names(ctx.conn, r[1])}
        for r in ctx.conn.execute(
            "SELECT id, targets, score, rationale FROM proposals WHERE kind = 'merge' AND status = 'pending' "
            "ORDER BY score DESC, id LIMIT 10")
    ]
    return PhaseResult(summary)


register_phase("proposals", proposals_phase, order=ORDER_PROPOSALS, prepare=find_candidates,
               kinds=("run", "consolidate"))


def _target_names(conn: sqlite3.Connection, targets: str) -> str:
    """``skill:1,skill:3`` as a person reads it: ``csv-to-parquet + parquet-from-csv`` (ids stay in ``targets``)."""
    from ..graph.nodes import Node, references

    nodes = []
    for part in targets.split(","):
        kind, _, ref = part.partition(":")
        if not ref.isdigit():
            return targets
        nodes.append(Node(kind, int(ref)))
    names = references(conn, nodes)
    return " + ".join(names[n].partition(":")[2] for n in nodes)
