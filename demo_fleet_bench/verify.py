"""After a run: the rows in the library against what every process says it wrote.

Rows the hosts wrote are matched by the ids the library returned to them: an id two processes were
both given (two writes, one row) or an id that has no row is *lost*; a row no process was told about
is *doubled*. Outcomes must also carry the skill, result and agent their writer sent. Hit rows (searches
return no row ids) are matched by count. The coordination log's positions must be exactly 1..n.

Then the derived state: counters equal to a recount, no episode left running or unprocessed, no
duplicated proposal; the incident (one failure message from agents on several hosts inside the alert
window) has exactly one systemic alert, and no fingerprint has two open alerts; every alert was raised
by exactly one caller; the dream lease never let two passes overlap, and every pass a racer saw
complete is recorded.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from host import INCIDENT_TOOL
from targets import Target


def _match(reported: list[Any], rows: set[Any]) -> tuple[int, int]:
    """(lost, doubled) of rows identified by id: ``reported`` ids from every writer, ``rows`` in the table."""
    counts = Counter(reported)
    lost = sum(n - 1 for n in counts.values() if n > 1) + sum(1 for key in counts if key not in rows)
    doubled = sum(1 for key in rows if key not in counts)
    return lost, doubled


def verify(target: Target, db: str, reports: list[dict[str, Any]], dream: dict[str, Any],
           threshold: int) -> dict[str, Any]:
    """Every check of one run; ``problems`` lists what failed (empty when the library is exact)."""
    q = lambda sql: target.rows(db, sql)  # noqa: E731
    tables: dict[str, dict[str, int]] = {}
    problems: list[str] = []

    def table(name: str, expected: int, actual: int, lost: int, doubled: int) -> None:
        tables[name] = {"wrote": expected, "has": actual, "lost": lost, "doubled": doubled}
        if lost or doubled:
            problems.append(f"{name}: processes wrote {expected}, the library has {actual} "
                            f"({lost} lost, {doubled} doubled)")

    agents = {r[0]: (r[1], bool(r[2])) for r in q("SELECT id, state, processed_at IS NOT NULL FROM agents")}
    wrote_agents = [a for r in reports for a in r["agents"]]
    table("agents", len(wrote_agents), len(agents), *_match(wrote_agents, set(agents)))
    ended = {a: state for r in reports for a, state in r["ended"].items()}
    wrong_state = sum(agents.get(a, ("?",))[0] != state for a, state in ended.items())
    if wrong_state:
        problems.append(f"{wrong_state} episodes not in the end state their host gave them")
    running = sum(state == "running" for state, _ in agents.values())
    unprocessed = sum(state != "running" and not done for state, done in agents.values())
    if running:
        problems.append(f"{running} episodes left running")
    if unprocessed:
        problems.append(f"{unprocessed} ended episodes never got their episode-end batch")

    uses = {r[0]: (r[1], r[2], r[3]) for r in q(
        "SELECT u.id, u.skill_id, u.success, a.agent_id FROM skill_uses AS u "
        "LEFT JOIN agent_keys AS a ON a.id = u.agent_key")}
    wrote_uses = [o for r in reports for o in r["outcomes"]]
    table("skill_uses", len(wrote_uses), len(uses), *_match([o[0] for o in wrote_uses], set(uses)))
    wrong = sum(uses.get(o[0]) not in (None, (o[1], o[2], o[3])) for o in wrote_uses)
    if wrong:
        problems.append(f"{wrong} outcome rows hold another skill, result or agent than their writer sent")
    per_skill: dict[int, list[int]] = {}
    for _, sid, ok, _agent in wrote_uses:
        tally = per_skill.setdefault(sid, [0, 0])
        tally[0] += 1
        tally[1] += ok
    stats = {r[0]: [r[1], r[2]] for r in q("SELECT skill_id, uses, successes FROM skill_stats WHERE uses > 0")}
    if stats != per_skill:
        problems.append("skill_stats counters differ from the outcomes the processes recorded")

    for name in ("skill_hits", "memory_hits"):
        expected = sum(r["hits"].get(name, 0) for r in reports)
        actual = q(f"SELECT count(*) FROM {name}")[0][0]
        table(name, expected, actual, max(0, expected - actual), max(0, actual - expected))

    occurrences = {r[0]: (r[1], r[2]) for r in q("SELECT id, agent_id, fingerprint_id FROM failure_occurrences")}
    wrote_occ = [o for r in reports for o in r["occurrences"]]
    table("failure_occurrences", len(wrote_occ), len(occurrences), *_match([o[0] for o in wrote_occ], set(occurrences)))
    fp_sum = q("SELECT coalesce(sum(occurrences), 0) FROM failure_fingerprints")[0][0]
    if fp_sum != len(occurrences):
        problems.append(f"failure fingerprints count {fp_sum} occurrences, the table has {len(occurrences)}")

    positions = [r[0] for r in q("SELECT position FROM coordination_log ORDER BY position")]
    wrote_pos = [p for r in reports for p in r["positions"]]
    table("coordination_log", len(wrote_pos), len(positions), *_match(wrote_pos, set(positions)))
    gaps = len(positions) - len(set(positions)) + (positions[-1] - len(positions) if positions else 0)
    if positions and positions[0] != 1 or gaps:
        problems.append(f"coordination-log positions are not 1..n without gaps: {len(positions)} entries, "
                        f"first {positions[0] if positions else None}, last {positions[-1] if positions else None}")

    dup_props = q("SELECT kind, targets, status, count(*) FROM proposals WHERE status IN ('pending', 'applied') "
                  "GROUP BY kind, targets, status HAVING count(*) > 1")
    if dup_props:
        problems.append(f"duplicated proposals: {dup_props[:3]}")

    incident = _incident(q, reports, threshold)
    problems += incident.pop("problems")
    lease = _lease(q, dream)
    problems += lease.pop("problems")
    lost = sum(t["lost"] for t in tables.values())
    doubled = sum(t["doubled"] for t in tables.values())
    return {"tables": tables, "lost": lost, "doubled": doubled, "positions": {
                "count": len(positions), "gaps": gaps, "last": positions[-1] if positions else 0},
            "incident": incident, "lease": lease, "problems": problems}


def _incident(q: Any, reports: list[dict[str, Any]], threshold: int) -> dict[str, Any]:
    """The incident's alert (exactly one), open alerts per fingerprint (at most one), raisers (one each)."""
    problems: list[str] = []
    reporters = sorted({o[1] for r in reports for o in r["occurrences"] if o[2]})
    hosts = sorted({agent.split("-")[0] for agent in reporters})
    fingerprints = [r[0] for r in q(f"SELECT id FROM failure_fingerprints WHERE tool = '{INCIDENT_TOOL}'")]
    alerts = q("SELECT id, fingerprint_id, agent_count, status FROM systemic_alerts ORDER BY id")
    incident_alerts = [a for a in alerts if a[1] in fingerprints]
    if len(fingerprints) != 1:
        problems.append(f"the incident's message made {len(fingerprints)} fingerprints, not one")
    if len(reporters) >= threshold and len(incident_alerts) != 1:
        problems.append(f"the incident ({len(reporters)} agents on {len(hosts)} hosts) raised "
                        f"{len(incident_alerts)} systemic alerts, not exactly one")
    if len(reporters) < threshold:
        problems.append(f"only {len(reporters)} agents reported the incident (threshold {threshold}): "
                        "the run was too short for the incident to happen")
    counted = max((a[2] for a in incident_alerts), default=0)
    open_per_fp = Counter(a[1] for a in alerts if a[3] != "resolved")
    doubled_alerts = sum(n - 1 for n in open_per_fp.values() if n > 1)
    if doubled_alerts:
        problems.append(f"{doubled_alerts} fingerprints have more than one open systemic alert")
    raised = Counter(a for r in reports for a in r["alerts_raised"])
    unclaimed = sum(1 for a in alerts if raised.get(a[0], 0) != 1)
    if unclaimed:
        problems.append(f"{unclaimed} alerts were not reported raised by exactly one caller")
    return {"agents": len(reporters), "hosts": len(hosts), "alerts": len(incident_alerts),
            "alert_agent_count": counted, "other_alerts": len(alerts) - len(incident_alerts),
            "doubled_alerts": doubled_alerts, "problems": problems}


def _lease(q: Any, dream: dict[str, Any]) -> dict[str, Any]:
    """No two dream passes (apply or dry run, manual or automatic) overlapped in time."""
    problems: list[str] = []
    runs = q("SELECT id, mode, trigger, status, started_at, finished_at FROM dream_runs ORDER BY started_at, id")
    left = [r for r in runs if r[3] == "running"]
    if left:
        problems.append(f"{len(left)} dream runs left 'running'")
    overlaps, busy_until = 0, float("-inf")
    for _id, _mode, _trigger, _status, started, finished in runs:  # ordered by start
        if finished is not None:
            overlaps += started < busy_until
            busy_until = max(busy_until, finished)
    if overlaps:
        problems.append(f"{overlaps} dream passes started before the one before them had finished")
    applied = sum(r[1] == "apply" and r[2] == "manual" and r[3] == "completed" for r in runs)
    if applied != dream["completed"]:
        problems.append(f"the dream racers saw {dream['completed']} `--apply` passes complete, "
                        f"the library records {applied}")
    if dream["completed"] == 0:
        problems.append("no `dream run --apply` pass completed during the run")
    return {"passes": len(runs), "applied": applied, "auto": sum(r[2] == "auto" for r in runs),
            "overlaps": overlaps, "problems": problems}
