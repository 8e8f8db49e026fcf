"""One simulated host: a separate OS process with its own library connection, running M agents.

The M agents are interleaved on the host's one connection (as agents sharing a machine's worker
pool would be): a seeded draw picks which agent acts next, and that agent does the next step of its
episode — start, then 4–12 operations from the reliability workload's mix (searches that record
hits, record_outcome, failure reports, coordination-log intents and votes), then complete (80 %) or
fail. Once the incident starts (a fixed fraction of the run), the host's next ``incident_agents``
distinct agents each report the same dead-database failure, so the incident is spread over every host
(a host that has not sent them all, or not yet run every kind of operation, by the end of the run
carries on until it has).

Every write the host makes is reported back by the id the library returned (agent ids, outcome ids
with skill and result, failure occurrence ids, coordination-log positions), and only when the call
returned: a call that raised is an error surfaced, never retried, never counted.
"""

from __future__ import annotations

import math
import random
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field, replace
from typing import Any

import workload  # demo_reliability_bench/workload.py: the same skills, queries and failures

from kaos_dream import Library, Settings

MIX = {"search": 40, "outcome": 30, "failure": 10, "log": 20}  # the reliability bench's weights
OPS = ("start", "search", "outcome", "failure", "incident", "log", "complete", "fail")
INCIDENT_TOOL = "pg_dump"
INCIDENT_MESSAGE = ('pg_dump: error: connection to server at "db-primary.internal" (10.20.0.7), port 5432 '
                    "failed: FATAL:  the database system is shutting down")
INCIDENT_AT = 0.3  # the incident starts this far into the run


@dataclass
class Agent:
    """One agent slot on the host: the running episode (None between episodes) and its state."""

    slot: int
    episode: int = 0
    agent: str | None = None
    left: int = 0
    last_skills: list[int] = field(default_factory=list)


@dataclass
class Written:
    """What the host wrote, by the ids the library returned."""

    agents: list[str] = field(default_factory=list)
    ended: dict[str, str] = field(default_factory=dict)  # agent id -> completed / failed
    outcomes: list[list[Any]] = field(default_factory=list)  # [outcome id, skill id, success, agent]
    occurrences: list[list[Any]] = field(default_factory=list)  # [occurrence id, agent, incident?]
    alerts_raised: list[int] = field(default_factory=list)
    positions: list[int] = field(default_factory=list)
    hits: Counter[str] = field(default_factory=Counter)


def run_host(spec: dict[str, Any], ready: Any, go: Any, results: Any) -> None:
    """The process body: wait for ``go``, run for ``spec['seconds']``, put the report on ``results``."""
    host = spec["host"]
    rng = random.Random(spec["seed"] * 1000 + host)
    # Automatic dry-run passes run inline, after the episode-end commit that made them due, instead of
    # in a detached process: a detached pass could outlive its host and still be running while the
    # library is verified. They compete for the lease with the racers' `--apply` passes all the same.
    lib = Library(spec["db"], settings=replace(Settings.from_env(), dream_auto_budget_ms=math.inf))
    skill_ids = [int(r[0]) for r in lib.conn.execute("SELECT id FROM skills ORDER BY id")]
    agents = [Agent(slot) for slot in range(spec["agents"])]
    wrote = Written()
    latency: dict[str, list[int]] = defaultdict(list)
    cpu: dict[str, list[int]] = defaultdict(list)  # client CPU (this process's thread) of each call
    errors: list[str] = []
    incident_left = spec["incident_agents"]
    reporters: set[str] = set()
    done: set[str] = set()
    ready.put(host)
    go.wait()
    began = time.monotonic()
    deadline, incident_at = began + spec["seconds"], began + INCIDENT_AT * spec["seconds"]
    while True:
        now = time.monotonic()
        # A host that has not sent its share into the incident, or not yet run every kind of operation,
        # by the deadline goes on until it has (starting episodes as needed): on a slow machine a short
        # run still exercises, and so verifies, every path.
        owed = sorted(set(MIX) - done)
        active = [a for a in agents if a.agent is not None or now < deadline or incident_left > 0 or owed]
        if not active:
            break
        a = rng.choice(active)
        if a.agent is None:
            op = "start"
        elif now >= incident_at and incident_left > 0 and a.agent not in reporters:
            op = "incident"
        elif now >= deadline and owed:
            op = owed[0]
        elif a.left <= 0 or now >= deadline:
            op = "complete" if rng.random() < 0.8 else "fail"
        else:
            op = rng.choices(list(MIX), weights=list(MIX.values()))[0]
        started, cpu_started = time.perf_counter_ns(), time.thread_time_ns()
        try:
            if op == "incident":
                reporters.add(a.agent)
                incident_left -= 1
            step(lib, op, a, spec, rng, skill_ids, wrote)
        except Exception as exc:  # surfaced to the report, never retried
            errors.append(f"{op}: {type(exc).__name__}: {exc}"[:400])
            if op in ("complete", "fail"):
                a.agent, a.last_skills = None, []
        latency[op].append(time.perf_counter_ns() - started)
        cpu[op].append(time.thread_time_ns() - cpu_started)
        done.add(op)
        if op not in ("start", "complete", "fail"):
            a.left -= 1
    elapsed = time.monotonic() - began
    locks = dict(getattr(lib.conn, "lock_stats", None) or {})  # PostgreSQL: lock-free vs locked write transactions
    lib.close()
    results.put({"host": host, "seconds": elapsed, "agents": wrote.agents, "ended": wrote.ended,
                 "outcomes": wrote.outcomes, "occurrences": wrote.occurrences,
                 "alerts_raised": wrote.alerts_raised, "positions": wrote.positions, "hits": dict(wrote.hits),
                 "latency_ns": dict(latency), "cpu_ns": dict(cpu), "locks": locks, "errors": errors})


def success_rate(seed: int, skill_id: int) -> float:
    """Each skill's true success rate, fixed by the seed (skills the dream promotes mid-run get one too)."""
    return 0.2 + 0.7 * random.Random(seed + skill_id).random()


def step(lib: Library, op: str, a: Agent, spec: dict[str, Any], rng: random.Random, skill_ids: list[int],
         wrote: Written) -> None:
    """Do one operation for agent ``a``; record what it wrote only after the call returned."""
    host = spec["host"]
    if op == "start":
        a.episode += 1
        a.agent = lib.episodes.start(f"h{host}-a{a.slot}-e{a.episode}", name=f"host {host} agent {a.slot}").id
        a.left = rng.randint(4, 12)
        wrote.agents.append(a.agent)
    elif op == "search":
        hits = lib.search(workload.query(rng), limit=5, record_hits=True, agent=a.agent)
        wrote.hits["skill_hits"] += sum(h.kind == "skill" for h in hits)
        wrote.hits["memory_hits"] += sum(h.kind == "memory" for h in hits)
        a.last_skills = [h.id for h in hits if h.kind == "skill"] or a.last_skills
    elif op == "outcome":
        sid = rng.choice(a.last_skills) if a.last_skills and rng.random() < 0.8 else rng.choice(skill_ids)
        ok = rng.random() < success_rate(spec["seed"], sid)
        outcome = lib.record_outcome(sid, ok, agent=a.agent)
        wrote.outcomes.append([outcome.id, sid, int(ok), a.agent])
    elif op in ("failure", "incident"):
        tool, message = (INCIDENT_TOOL, INCIDENT_MESSAGE) if op == "incident" else workload.failure(rng)
        recorded = lib.failures.record(tool, message, agent=a.agent)
        wrote.occurrences.append([recorded.occurrence_id, a.agent, op == "incident"])
        if recorded.alert_id is not None:
            wrote.alerts_raised.append(recorded.alert_id)
    elif op == "log":
        intent = lib.log.intent(a.agent or "nobody", workload.action(rng))
        wrote.positions.append(intent.position)
        if rng.random() < 0.5:
            wrote.positions.append(lib.log.vote(f"reviewer-h{host}", intent.position, rng.random() < 0.9).position)
    else:  # complete / fail
        assert a.agent is not None
        ended = (lib.episodes.complete if op == "complete" else lib.episodes.fail)(a.agent)
        if ended.changed:
            wrote.ended[a.agent] = "completed" if op == "complete" else "failed"
        a.agent, a.last_skills = None, []
