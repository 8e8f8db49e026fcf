"""Agent sessions (episodes) and the telemetry fast path.

Fast path: :meth:`Episodes.record_outcome` and :meth:`Episodes.record_hits` (called by
``Library.search(record_hits=True)``) each write telemetry rows in the caller's transaction (one
``BEGIN IMMEDIATE`` … ``COMMIT`` of their own when there is none) and touch no graph table. An agent
id that was never started is registered as a running agent on first use (insert-or-ignore), so an
agent may report outcomes without calling ``start`` first.

Episode end (:meth:`complete`, :meth:`fail`, :meth:`kill`): in one transaction the state is set, an
:class:`~kaos_dream.hooks.EpisodeEnd` is built, the gates decide, and only when they pass are the
co-activation counts (one multi-row upsert) and the Hebbian strengthening of existing
``co_occurs_with`` edges (one executemany) written; the episode-end hooks run inside the same
transaction; the after-episode hooks run after it commits (when the caller wraps ``end`` in its
own ``lib.transaction()``, they run before the caller's commit). Ending an episode that has
already ended changes nothing. With ``KAOS_DREAM_AUTO`` off the state is still recorded (and the
episode marked processed, so turning plasticity back on never replays it), but no gate, batch or
hook runs.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from . import hooks, limits
from .episode_cost import EpisodeCost
from .errors import ConflictError, InvalidInputError, NotFoundError
from .names import clean_agent_id, clean_principal
from .plasticity.hebbian import CROSS_MODAL_WEIGHT, SAME_KIND_WEIGHT, canonical
from .plasticity.task import task_hash, task_key
from .store import transaction
from .store.agent_uses import agent_uses
from .store.dialect import WriteLockNeeded, inserted_ids, is_postgres, recoverable, share_write_lock
from .store.records import as_dict, from_row

if TYPE_CHECKING:
    from .failures.records import Failures
    from .search.lexical import Hit
    from .skills import Skills
    from .store.context import StoreContext

END_STATES = ("completed", "failed", "killed")
CITATION_KINDS = ("skill", "memory", "failure")


@dataclass(frozen=True)
class Episode:
    id: str
    name: str | None
    state: str
    started_at: float
    ended_at: float | None
    conclusion: str | None
    citations: tuple[tuple[str, str], ...]
    processed_at: float | None
    tokens_in: int | None
    tokens_out: int | None
    tool_calls: int | None
    duration_s: float | None
    principal: str | None  # who opened it (None: written before principals were recorded)

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> Episode:
        return from_row(cls, row, citations=tuple((str(k), str(v)) for k, v in json.loads(row["citations"])))

    def to_dict(self) -> dict[str, Any]:
        return as_dict(self, citations=[list(c) for c in self.citations])


@dataclass(frozen=True)
class EndResult:
    """What ending an episode did. ``changed`` is False when it had already ended (a no-op)."""

    episode: Episode
    changed: bool
    learned: bool  # the gate passed and the batch was written
    gate_reason: str | None
    pairs: int  # co-activation pairs counted
    strengthened: int  # existing co_occurs_with edges strengthened

    def to_dict(self) -> dict[str, Any]:
        return {
            "episode": self.episode.to_dict(),
            "changed": self.changed,
            "learned": self.learned,
            "gate": self.gate_reason,
            "pairs": self.pairs,
            "strengthened": self.strengthened,
        }


@dataclass(frozen=True)
class Outcome:
    id: int
    skill_id: int
    agent_id: str | None
    success: bool
    task: str | None
    task_hash: str | None
    created_at: float

    def to_dict(self) -> dict[str, Any]:
        return as_dict(self)


def clean_citations(citations: Iterable[Sequence[str] | str]) -> tuple[tuple[str, str], ...]:
    """Citations as ``(kind, ref)`` pairs, from tuples or the CLI's ``"KIND:REF"`` strings
    (``"skill:csv-to-parquet"``); duplicates dropped, order kept."""
    out: list[tuple[str, str]] = []
    given = list(citations)
    limits.capped_count(given, "citations", limits.CITATIONS)
    for item in given:
        if isinstance(item, str):  # "skill:NAME" (a bare two-letter string must not pass as a pair)
            kind_text, sep, ref_text = item.partition(":")
            if not sep:
                raise InvalidInputError(f"a citation is KIND:REF or (kind, name-or-key), got {item!r}")
            item = (kind_text.lower(), ref_text)
        if len(item) != 2:
            raise InvalidInputError(f"a citation is (kind, name-or-key), got {item!r}")
        kind, ref = str(item[0]).strip(), str(item[1]).strip()
        if kind not in CITATION_KINDS:
            raise InvalidInputError(f"citation kind {kind!r} must be one of {', '.join(CITATION_KINDS)}")
        if not ref:
            raise InvalidInputError("a citation must name what it cites")
        limits.capped(ref, "a citation's reference", limits.REF)
        if (kind, ref) not in out:
            out.append((kind, ref))
    return tuple(out)


def _pairs_cte(materialized: bool = False) -> str:
    """``s``, ``m`` and ``p``: the episode's co-activation pairs generated in SQL from two JSON arrays of
    distinct ids (``?1`` skills, ``?2`` memories). The same set, canonical order and weights as
    :func:`~kaos_dream.plasticity.hebbian.coactivation_pairs`, without binding seven values per pair
    from Python (measured: generating 28 pairs from 8 ids costs a third of binding 196 values).
    ``materialized`` keeps ``p`` a table of its own, so a join probes each pair by its full key
    instead of scanning every edge of a node (needs SQLite 3.35)."""
    first, second = canonical(("skill", 0), ("memory", 0))
    cross = "s.id, 'memory', m.id" if first[0] == "skill" else "m.id, 'skill', s.id"
    return (
        "s (id) AS (SELECT value FROM json_each(?1)), m (id) AS (SELECT value FROM json_each(?2)), "
        f"p (a_kind, a_id, b_kind, b_id, w) AS {'MATERIALIZED ' if materialized else ''}("
        f"SELECT 'skill', a.id, 'skill', b.id, {SAME_KIND_WEIGHT!r} FROM s AS a JOIN s AS b ON a.id < b.id "
        f"UNION ALL SELECT 'memory', a.id, 'memory', b.id, {SAME_KIND_WEIGHT!r} FROM m AS a JOIN m AS b ON a.id < b.id "
        f"UNION ALL SELECT '{first[0]}', {cross}, {CROSS_MODAL_WEIGHT!r} FROM m CROSS JOIN s)"
    )


PAIRS_CTE = _pairs_cte()

# Co-activation counts of every pair in one upsert.
_COACTIVATION_SQL = f"""
INSERT INTO coactivations (a_kind, a_id, b_kind, b_id, count, first_at, last_at)
WITH {PAIRS_CTE} SELECT a_kind, a_id, b_kind, b_id, w, ?3, ?3 FROM p WHERE true
ON CONFLICT (a_kind, a_id, b_kind, b_id) DO UPDATE SET count = count + excluded.count, last_at = excluded.last_at
"""

# LTP of the co_occurs_with edges that exist between the pairs: one unique-index probe per pair, in
# one statement, so pairs without an edge (the common case) cost a lookup and nothing more. The
# rate is ?4, halved for cross-modal pairs (weight <= ?5). The WITH sits inside the FROM so the
# statement still starts with UPDATE (Python's sqlite3 reports rowcount for DML statements only).
_LTP_SQL = f"""
UPDATE edges SET strength = min(1.0, strength + (?4 * (CASE WHEN p.w <= ?5 THEN 0.5 ELSE 1.0 END)) * (1.0 - strength)),
       activations = activations + 1,
       last_activated_cycle = coalesce((SELECT CAST(value AS INTEGER) FROM dream_state WHERE key = 'cycle'), 0),
       last_activated_at = ?3, updated_at = ?3
FROM (WITH {_pairs_cte(materialized=True)} SELECT * FROM p) AS p
WHERE edges.src_kind = p.a_kind AND edges.src_id = p.a_id AND edges.dst_kind = p.b_kind AND edges.dst_id = p.b_id
  AND edges.relation = 'co_occurs_with' AND edges.pruned_at IS NULL
"""


# What an ended session touched (EpisodeEnd.skills / memories / failure_ids). The failure part is
# the same query as Failures.ids_for_agent, folded in so an episode end reads its session once.
# Duplicates are removed in Python: measured faster than three DISTINCT temp b-trees.
_SESSION_NODES_SQL = f"""
{agent_uses("0, skill_id")}
UNION ALL SELECT 1, memory_id FROM memory_hits WHERE agent_id = ?1
UNION ALL SELECT 2, fingerprint_id FROM failure_occurrences WHERE agent_id = ?1
"""
# An episode end's cost: each field given replaces the stored count; a duration not given is the time
# since the start (the parameters: tokens in, tokens out, tool calls, duration, now).
# An episode end's claim, up to its cost (the parameters: state, ended at, conclusion, citations, processed at).
_END_SQL_HEAD = "UPDATE agents SET state = ?, ended_at = ?, conclusion = ?, citations = ?, processed_at = ?, "
_END_COST_SET = ("tokens_in = coalesce(?, tokens_in), tokens_out = coalesce(?, tokens_out), "
                 "tool_calls = coalesce(?, tool_calls), "
                 "duration_s = coalesce(?, duration_s, CASE WHEN ? > started_at THEN ? - started_at ELSE 0 END)")
# A running episode's counts plus what a harness reported (?1-?3; NULL stays NULL until something is
# reported); a duration given (?4) replaces the stored one. ?5 is the agent.
_ADD_USAGE_SQL = (
    "UPDATE agents SET tokens_in = CASE WHEN ?1 IS NULL THEN tokens_in ELSE coalesce(tokens_in, 0) + ?1 END, "
    "tokens_out = CASE WHEN ?2 IS NULL THEN tokens_out ELSE coalesce(tokens_out, 0) + ?2 END, "
    "tool_calls = CASE WHEN ?3 IS NULL THEN tool_calls ELSE coalesce(tool_calls, 0) + ?3 END, "
    "duration_s = coalesce(?4, duration_s) WHERE id = ?5 AND state = 'running'"
)
# Per-skill outcome counts of one agent (``kaos agent show``).
_ACTIVITY_SQL = (
    "SELECT u.skill_id, s.name, count(*), sum(u.success) "
    f"FROM ({agent_uses('skill_id, success')}) AS u "
    "JOIN skills AS s ON s.id = u.skill_id GROUP BY u.skill_id, s.id ORDER BY u.skill_id"
)


# A principal's running episodes that are not stale yet, counted up to the cap (?3) and no further.
_OPEN_EPISODES_SQL = (
    "SELECT count(*) FROM (SELECT 1 FROM agents WHERE state = 'running' AND principal = ?1 AND started_at >= ?2 "
    "LIMIT ?3) AS o"
)

# An outcome row names its agent by its key in agent_keys (migration 16). An agent that is not
# registered gets key -1, which no agent has, so the row fails its foreign key exactly as a missing
# agent's id did (and the full path registers it); no agent is NULL.
_AGENT_KEY = ("CASE WHEN ?2 IS NULL THEN NULL "
              "ELSE coalesce((SELECT a.id FROM agent_keys AS a WHERE a.agent_id = ?2), -1) END")
# An outcome without a task context (the common fast path): one row, the counters by trigger.
_INSERT_USE_SQL = (
    "INSERT INTO skill_uses (skill_id, agent_key, success, task_id, task, created_at) "
    f"VALUES (?1, {_AGENT_KEY}, ?3, NULL, ?4, ?5)"
)
# The same for an agent with no search hit on the skill, checked in the statement: a hit makes the key
# -1, so the foreign key fails and the caller reads the hit's query (the task context) instead. Saves
# the read of the latest hit for agents that record outcomes without searching here first.
_INSERT_UNSEARCHED_USE_SQL = (
    "INSERT INTO skill_uses (skill_id, agent_key, success, task_id, task, created_at) "
    "VALUES (?1, CASE WHEN EXISTS (SELECT 1 FROM skill_hits WHERE agent_id = ?2 AND skill_id = ?1) THEN -1 "
    "ELSE coalesce((SELECT a.id FROM agent_keys AS a WHERE a.agent_id = ?2), -1) END, ?3, NULL, NULL, ?4)"
)
# An outcome with a task context, keyed by the task's surrogate id looked up by its digest in the same
# statement: no row when the task is not stored yet (the caller stores it and repeats). The row keeps
# its own wording only when it is not the task's text (a task without text keeps every wording).
_INSERT_TASKED_USE_SQL = (
    "INSERT INTO skill_uses (skill_id, agent_key, success, task_id, task, created_at) "
    f"SELECT ?1, {_AGENT_KEY}, ?3, t.id, CASE WHEN t.text = ?4 THEN NULL ELSE ?4 END, ?5 "
    "FROM tasks AS t WHERE t.hash = ?6"
)
# Either kind in one statement, for a batch whose tasks are all stored (rows keep the batch's order).
_ANY_USE_SQL = (
    "INSERT INTO skill_uses (skill_id, agent_key, success, task_id, task, created_at) "
    "SELECT ?1, {agent}, ?3, t.id, CASE WHEN t.text = ?4 THEN NULL ELSE ?4 END, ?5 "
    "FROM (SELECT CAST(?6 AS INTEGER) AS hash) AS k LEFT JOIN tasks AS t ON t.hash = k.hash"
)
_INSERT_ANY_USE_SQL = _ANY_USE_SQL.format(agent=_AGENT_KEY)
# The same with the agent's key itself (a batch looks its agents' keys up once).
_INSERT_KEYED_USE_SQL = _ANY_USE_SQL.format(agent="?2")
_AGENT_KEY_SQL = "SELECT id FROM agent_keys WHERE agent_id = ?"
_LATEST_QUERY_SQL = "SELECT query FROM skill_hits WHERE agent_id = ? AND skill_id = ? ORDER BY id DESC LIMIT 1"
# A task context's first wording becomes its text; a later, different wording stays on its use row.
_INSERT_TASK_SQL = "INSERT INTO tasks (hash, text) VALUES (?, ?) ON CONFLICT (hash) DO NOTHING"


def _outcome_item(
    n: int, item: Mapping[str, Any], cleaned: dict[str, str]
) -> tuple[int | str, bool, str | None, str | None]:
    """One item of :meth:`Episodes.record_outcomes` checked: ``(skill, success, agent, task)``."""
    if not isinstance(item, Mapping):
        raise InvalidInputError(f"outcome {n}: expected an object with skill and success, got {type(item).__name__}")
    unknown = sorted(set(item) - {"skill", "success", "agent", "task"})
    if unknown:
        raise InvalidInputError(f"outcome {n}: unknown field {unknown[0]!r} (use skill, success, agent, task)")
    skill, success, agent, task = item.get("skill"), item.get("success"), item.get("agent"), item.get("task")
    if isinstance(skill, bool) or not isinstance(skill, int | str) or (isinstance(skill, str) and not skill.strip()):
        raise InvalidInputError(f"outcome {n}: skill must be a skill id or name")
    if not isinstance(success, bool):
        raise InvalidInputError(f"outcome {n}: success must be true or false")
    if agent is not None and not isinstance(agent, str):
        raise InvalidInputError(f"outcome {n}: agent must be a string")
    if task is not None and not isinstance(task, str):
        raise InvalidInputError(f"outcome {n}: task must be a string")
    try:
        limits.capped_optional(task, "task", limits.TASK)
        if isinstance(skill, str):
            limits.capped(skill, "skill", limits.REF)
    except InvalidInputError as exc:
        raise InvalidInputError(f"outcome {n}: {exc}") from None
    agent_id = None
    if agent is not None:
        agent_id = cleaned.get(agent)
        if agent_id is None:
            try:
                agent_id = cleaned[agent] = clean_agent_id(agent)
            except InvalidInputError as exc:
                raise InvalidInputError(f"outcome {n}: {exc}") from None
    return skill, success, agent_id, task


def json_ids(ids: Sequence[int]) -> str:
    """A JSON array of integers for ``json_each``, without the general encoder's overhead."""
    return "[" + ",".join(map(str, ids)) + "]"


def _connection_set(conn: Any, name: str) -> set[str]:
    """A set of agent ids kept on the connection under ``name`` (hints of what this connection has
    seen, never facts: every use of one is checked by the statement it saves)."""
    found: set[str] | None = getattr(conn, name, None)
    if found is None:
        found = set()
        with contextlib.suppress(AttributeError):  # a plain sqlite3.Connection takes no attributes
            setattr(conn, name, found)
    return found


def pair_count(skills: int, memories: int) -> int:
    """How many co-activation pairs ``skills`` distinct skills and ``memories`` distinct memories make."""
    return skills * (skills - 1) // 2 + memories * (memories - 1) // 2 + skills * memories


class Episodes:
    """Agent sessions and their telemetry; one instance per library (``lib.episodes``). Gates and
    episode hooks run through the context's hook runner; ``failures`` records the failure a failed
    episode reports, ``skills`` resolves the skills outcomes name."""

    def __init__(self, ctx: StoreContext, *, skills: Skills, failures: Failures) -> None:
        self._ctx = ctx
        self._skills = skills
        self._failures = failures
        self._postgres = is_postgres(ctx.conn)
        # The hot path's statements, all inside a write transaction: on SQLite the C ``execute`` itself.
        self._execute: Any = type(ctx.conn).execute if self._postgres else sqlite3.Connection.execute

    @property
    def _conn(self) -> sqlite3.Connection:
        return self._ctx.conn

    # -- sessions ---------------------------------------------------------------------------------
    def start(self, agent_id: str | None = None, name: str | None = None, *, principal: str | None = None) -> Episode:
        """Register a running agent; the id is a fresh uuid4 hex string when not given.

        The episode names its principal: ``principal`` when given (a trusted caller of the library
        acting for someone else), else the library's. A principal may hold at most
        ``KAOS_PRINCIPAL_MAX_OPEN_EPISODES`` running episodes that are not yet stale
        (``KAOS_EPISODE_STALE_AFTER_S``); one more is a ConflictError that says how to free one.
        """
        agent_id = clean_agent_id(agent_id) if agent_id is not None else uuid.uuid4().hex
        who = clean_principal(principal) if principal is not None else self._ctx.principal
        if name is not None:
            name = limits.capped(name.strip(), "the episode's name", limits.NAME) or None
        settings = self._ctx.settings
        cap = settings.principal_max_open_episodes
        with transaction(self._conn):
            now = self._ctx.now()
            # Counted inside the write transaction, so concurrent starts of one principal cannot
            # both pass a cap that has room for one.
            open_now = self._conn.execute(_OPEN_EPISODES_SQL, (who, now - settings.episode_stale_after_s, cap)
                                          ).fetchone()[0]
            if open_now >= cap:
                raise ConflictError(
                    f"principal {who!r} already has {cap} running episodes (KAOS_PRINCIPAL_MAX_OPEN_EPISODES): "
                    "end one (kaos agent complete|fail|kill) or wait until they are stale (KAOS_EPISODE_STALE_AFTER_S)")
            try:
                self._conn.execute(
                    "INSERT INTO agents (id, name, started_at, principal) VALUES (?, ?, ?, ?)",
                    (agent_id, name, now, who))
            except sqlite3.IntegrityError:
                raise ConflictError(f"agent {agent_id!r} already exists") from None
        return self.get(agent_id)

    def stale(self, now: float | None = None) -> list[Episode]:
        """Running episodes started more than ``KAOS_EPISODE_STALE_AFTER_S`` ago (oldest first, ties by
        id): their client most likely crashed. They no longer count against their principal's cap."""
        now = self._ctx.now() if now is None else now
        cutoff = now - self._ctx.settings.episode_stale_after_s
        return [Episode.from_row(r) for r in self._conn.execute(
            "SELECT * FROM agents WHERE state = 'running' AND started_at < ? ORDER BY started_at, id", (cutoff,))]

    def get(self, agent_id: str) -> Episode:
        """One episode (agent session) by id; NotFoundError when there is none."""
        row = self._conn.execute("SELECT * FROM agents WHERE id = ?", (agent_id.strip(),)).fetchone()
        if row is None:
            raise NotFoundError(f"no agent {agent_id!r}")
        return Episode.from_row(row)

    def list(self, *, state: str | None = None, limit: int | None = None) -> list[Episode]:
        """Newest first (ties by id)."""
        if state is not None and state not in ("running", *END_STATES):
            raise InvalidInputError(f"unknown state {state!r}: use running, completed, failed or killed")
        if limit is not None and limit < 0:
            raise InvalidInputError("limit must not be negative")
        sql = "SELECT * FROM agents" + (" WHERE state = ?" if state else "") + " ORDER BY started_at DESC, id"
        params: list[Any] = [state] if state else []
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        return [Episode.from_row(r) for r in self._conn.execute(sql, params)]

    def activity(self, agent_id: str) -> dict[str, Any]:
        """Per-skill outcome counts and memories hit by one agent (for ``kaos agent show``)."""
        agent_id = self.get(agent_id).id
        skills = [
            {"skill_id": r[0], "name": r[1], "uses": r[2], "successes": r[3]}
            for r in self._conn.execute(_ACTIVITY_SQL, (agent_id,))
        ]
        memories = [
            {"memory_id": r[0], "key": r[1], "hits": r[2]}
            for r in self._conn.execute(
                "SELECT h.memory_id, m.key, count(*) FROM memory_hits AS h JOIN memories AS m ON m.id = h.memory_id "
                "WHERE h.agent_id = ? GROUP BY h.memory_id, m.id ORDER BY h.memory_id",
                (agent_id,),
            )
        ]
        skill_hits = self._conn.execute("SELECT count(*) FROM skill_hits WHERE agent_id = ?", (agent_id,)).fetchone()[0]
        return {"skills": skills, "memories": memories, "skill_hits": skill_hits}

    def complete(
        self, agent_id: str, conclusion: str | None = None, citations: Iterable[Sequence[str]] = (),
        *, cost: EpisodeCost | None = None,
    ) -> EndResult:
        """End the episode successfully: the only end state the default gate lets reinforce anything."""
        return self.end(agent_id, "completed", conclusion, citations, cost=cost)

    def fail(
        self,
        agent_id: str,
        conclusion: str | None = None,
        citations: Iterable[Sequence[str]] = (),
        *,
        tool: str | None = None,
        error: str | None = None,
        cost: EpisodeCost | None = None,
    ) -> EndResult:
        """End the episode as failed: recorded, hooks run, nothing is reinforced.

        With ``tool`` and ``error`` the failure is recorded first (fingerprint, diagnosis, alerts), so
        the episode-end hooks see it among the agent's failures.
        """
        if (tool is None) != (error is None):
            raise InvalidInputError("give both tool and error to record the failure, or neither")
        if tool is not None and error is not None:
            self.get(clean_agent_id(agent_id))  # an unknown agent is an error before anything is written
            self._failures.record(tool, error, agent=agent_id)
        return self.end(agent_id, "failed", conclusion, citations, cost=cost)

    def kill(
        self, agent_id: str, conclusion: str | None = None, citations: Iterable[Sequence[str]] = (),
        *, cost: EpisodeCost | None = None,
    ) -> EndResult:
        """End the episode as killed: recorded, hooks run, nothing is reinforced."""
        return self.end(agent_id, "killed", conclusion, citations, cost=cost)

    def end(
        self,
        agent_id: str,
        state: str,
        conclusion: str | None = None,
        citations: Iterable[Sequence[str]] = (),
        extra: dict[str, object] | None = None,
        *,
        cost: EpisodeCost | None = None,
    ) -> EndResult:
        """End an episode in ``state``; a second end of the same agent is a no-op (``changed=False``).

        ``cost`` (tokens, tool calls, duration) is stored with the end; a field it leaves out keeps
        what :meth:`add_usage` counted, and a duration not given is the time since the start."""
        if state not in END_STATES:
            raise InvalidInputError(f"end state must be one of {', '.join(END_STATES)}")
        cost = (cost or EpisodeCost()).checked()
        agent_id = clean_agent_id(agent_id)
        limits.capped_optional(conclusion, "conclusion", limits.CONCLUSION)
        cited = clean_citations(citations)
        auto = self._ctx.settings.dream_auto
        if auto and not self._conn.in_transaction:
            # Slow read-only work (LLM validators) happens here, before the write lock is taken.
            self._ctx.hooks.before_episode_end(hooks.EpisodeDraft(agent_id, state, conclusion, cited))
        # PostgreSQL: an end of its own runs beside other ends, holding the database-wide lock shared;
        # one that runs a statement only the exclusive lock allows (a custom hook, a new evidence
        # edge) is rolled back by the connection and run once more, exclusively.
        share = not self._conn.in_transaction
        while True:
            try:
                return self._end_once(agent_id, state, conclusion, cited, extra, cost, auto, share)
            except WriteLockNeeded:
                if not share:
                    raise
                share = False

    def _end_once(
        self, agent_id: str, state: str, conclusion: str | None, cited: tuple[tuple[str, str], ...],
        extra: dict[str, object] | None, cost: EpisodeCost, auto: bool, share: bool,
    ) -> EndResult:
        """One attempt at :meth:`end`'s transaction (``share``: in shared mode, on PostgreSQL)."""
        episode_end: hooks.EpisodeEnd | None = None
        learned, reason, pairs_written, strengthened = False, None, 0, 0
        with transaction(self._conn):
            if share:
                share_write_lock(self._conn)
            now = self._ctx.now()
            # The claim: one UPDATE of a running episode. Two ends of one episode at once: the second
            # waits for the first's row lock and then finds it ended (no row), on either engine.
            row = self._conn.execute(
                f"{_END_SQL_HEAD}{_END_COST_SET} WHERE id = ? AND state = 'running' AND processed_at IS NULL "
                "RETURNING *",
                (state, now, conclusion, json.dumps([list(c) for c in cited]), now, *cost.values(),
                 now, now, agent_id),
            ).fetchall()
            if not row:
                found = self._conn.execute("SELECT * FROM agents WHERE id = ?", (agent_id,)).fetchone()
                if found is None:
                    raise NotFoundError(f"no agent {agent_id!r}")
                return EndResult(Episode.from_row(found), False, False, "already ended", 0, 0)
            row = row[0]
            if auto:
                skills, memories, failure_ids = self._session_nodes(agent_id)
                episode_end = hooks.EpisodeEnd(
                    agent_id=agent_id,
                    state=state,
                    started_at=row["started_at"],
                    ended_at=now,
                    skills=skills,
                    memories=memories,
                    conclusion=conclusion,
                    citations=cited,
                    failure_ids=failure_ids,
                    extra=dict(extra or {}),
                )
                decision = self._ctx.hooks.decide_gate(episode_end)
                reason = decision.reason
                if decision.passed:
                    learned = True
                    pairs_written, strengthened = self._reinforce(skills, memories, now)
                self._ctx.hooks.episode_end(episode_end, decision)
            else:
                reason = "plasticity off (KAOS_DREAM_AUTO)"
        if episode_end is not None:
            self._ctx.hooks.after_episode(episode_end)
        return EndResult(self.get(agent_id), True, learned, reason, pairs_written, strengthened)

    def _session_nodes(self, agent_id: str) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
        """Distinct skills it reported outcomes for, memories its searches returned and failure
        fingerprints it hit, each in id order: one statement, since every episode end asks."""
        groups: tuple[set[int], set[int], set[int]] = (set(), set(), set())
        for group, node_id in self._conn.execute(_SESSION_NODES_SQL, (agent_id,)):
            groups[group].add(int(node_id))
        skills, memories, failures = (tuple(sorted(g)) for g in groups)
        return skills, memories, failures

    def _reinforce(self, skills: Sequence[int], memories: Sequence[int], now: float) -> tuple[int, int]:
        """Co-activation counts (one upsert) and LTP of the co_occurs_with edges that exist between
        the pairs (one update); the pairs are generated in SQL from the two id lists."""
        skill_ids, memory_ids = sorted({int(i) for i in skills}), sorted({int(i) for i in memories})
        pairs = pair_count(len(skill_ids), len(memory_ids))
        if not pairs:
            return 0, 0
        ids = (json_ids(skill_ids), json_ids(memory_ids), now)
        self._conn.execute(_COACTIVATION_SQL, ids)
        eta = self._ctx.settings.ltp_eta
        strengthened = self._conn.execute(_LTP_SQL, (*ids, eta, CROSS_MODAL_WEIGHT)).rowcount
        return pairs, strengthened

    def add_usage(self, agent_id: str, usage: EpisodeCost) -> Episode:
        """Add ``usage`` (tokens, tool calls) to a running episode's counts, for a harness that reports
        as it goes (``kaos hook``); a duration given replaces the stored one. An ended episode is
        left as it ended."""
        usage = usage.checked()
        agent_id = clean_agent_id(agent_id)
        with transaction(self._conn):
            self._ensure_agent(agent_id, self._ctx.now())
            self._conn.execute(_ADD_USAGE_SQL, (*usage.values(), agent_id))
        return self.get(agent_id)

    # -- fast path --------------------------------------------------------------------------------
    def _ensure_agent(self, agent_id: str, now: float) -> None:
        # A session registered by its first outcome or hit names the library's principal too (so it
        # votes as that principal); it is not held to the cap: only the MCP server's agent_start and
        # `agent start` open sessions on an untrusted client's behalf, and they go through start().
        self._conn.execute("INSERT OR IGNORE INTO agents (id, started_at, principal) VALUES (?, ?, ?)",
                           (agent_id, now, self._ctx.principal))

    def _known_agents(self) -> set[str]:
        """Agents this connection has seen registered. Only a hint that saves the insert-or-ignore on
        every outcome: ``skill_uses.agent_key`` is a foreign key, so an outcome whose agent is not there
        after all (its registration was rolled back) fails its insert and takes the full path."""
        return _connection_set(self._ctx.conn, "kaos_known_agents")

    def _skill_ids(self, refs: Sequence[int | str]) -> list[int]:
        """Skill ids for ``refs``: integer ids checked in one query, names resolved one by one."""
        ids = {int(r) for r in refs if type(r) is int}
        found = set()
        if ids:
            found = {row[0] for row in self._conn.execute(
                "SELECT id FROM skills WHERE id IN (SELECT value FROM json_each(?))", (json_ids(sorted(ids)),))}
        out = []
        for ref in refs:
            if type(ref) is int and ref in found:
                out.append(ref)
            else:
                out.append(self._skills.resolve_id(ref))  # a name, or the NotFoundError of a missing id
        return out

    def record_outcome(
        self, skill: int | str, success: bool, agent: str | None = None, task: str | None = None
    ) -> Outcome:
        """One ``skill_uses`` row (counters follow by trigger). Without ``task``, the task context is
        the query of this agent's latest search that returned the skill, when there is one.

        The common call (an integer id, an agent already seen) is one insert: the foreign keys check
        the skill and the agent, the insert finds the task by its digest, and only when one of them
        is missing does the full path (resolve, register, store the task) run."""
        if not isinstance(success, bool):
            raise InvalidInputError("success must be True or False")
        limits.capped_optional(task, "task", limits.TASK)
        conn = self._ctx.conn
        known = self._known_agents()
        # A known id was cleaned when it was registered, and cleaning a clean id changes nothing.
        agent_id = (agent if agent in known else clean_agent_id(agent)) if agent is not None else None
        now = self._ctx.now()
        with transaction(conn):
            if type(skill) is int and (agent_id is None or agent_id in known):
                outcome = self._fast_outcome(conn, skill, success, agent_id, task, now)
                if outcome is not None:
                    return outcome
                known.discard(agent_id or "")
            skill_id = self._skills.resolve_id(skill)
            if agent_id is not None:
                if agent_id not in known:
                    self._ensure_agent(agent_id, now)
                if task is None:
                    task = self._latest_query(agent_id, skill_id)
            digest = task_hash(task)
            if digest is not None:
                conn.execute(_INSERT_TASK_SQL, (task_key(digest), task))
            row = (skill_id, agent_id, int(success), task, now, task_key(digest))
            try:
                with recoverable(conn):
                    cur = conn.execute(_INSERT_ANY_USE_SQL, row)
            except sqlite3.IntegrityError:  # the skill exists: the agent the connection knew was rolled back
                if agent_id is None:
                    raise
                self._ensure_agent(agent_id, now)
                cur = conn.execute(_INSERT_ANY_USE_SQL, row)
        if agent_id is not None:
            known.add(agent_id)
        return Outcome(int(cur.lastrowid or 0), skill_id, agent_id, success, task, digest, now)

    def _fast_outcome(
        self, conn: Any, skill: int, success: bool, agent_id: str | None, task: str | None, now: float
    ) -> Outcome | None:
        """The common outcome in the caller's write transaction: at most one read (the agent's latest
        hit, when no task is given) and one insert, or ``None`` when the full path must run (the
        skill or the agent is missing, or the task is not stored yet). On SQLite the statements
        skip the connection's Python-level ``execute`` (only needed outside a transaction)."""
        execute = self._execute
        if agent_id is not None and task is None:
            searched = _connection_set(conn, "kaos_searched_agents")
            if not self._postgres and agent_id not in searched:
                try:
                    cur = execute(conn, _INSERT_UNSEARCHED_USE_SQL, (skill, agent_id, int(success), now))
                except sqlite3.IntegrityError:  # a hit (or a missing skill or agent): the two-statement form
                    searched.add(agent_id)
                else:
                    return Outcome(int(cur.lastrowid or 0), skill, agent_id, success, None, None, now)
            row = execute(conn, _LATEST_QUERY_SQL, (agent_id, skill)).fetchone()
            task = row[0] if row is not None else None
        digest = task_hash(task) if task is not None else None
        if digest is None:
            sql, params = _INSERT_USE_SQL, (skill, agent_id, int(success), task, now)
        else:
            sql, params = _INSERT_TASKED_USE_SQL, (skill, agent_id, int(success), task, now, task_key(digest))
        try:
            if self._postgres:
                with conn.savepoint():
                    cur = conn.execute(sql, params)
            else:
                cur = execute(conn, sql, params)
        except sqlite3.IntegrityError:  # a missing skill or agent: the full path says which
            return None
        if cur.rowcount != 1:  # the task is new: the full path stores it
            return None
        return Outcome(int(cur.lastrowid or 0), skill, agent_id, success, task, digest, now)

    def _latest_query(self, agent_id: str, skill_id: int) -> str | None:
        row = self._conn.execute(_LATEST_QUERY_SQL, (agent_id, skill_id)).fetchone()
        return row[0] if row is not None else None

    def record_outcomes(self, outcomes: Iterable[Mapping[str, Any]]) -> list[Outcome]:
        """Many outcomes in one transaction: each item has ``skill`` and ``success`` and optionally
        ``agent`` and ``task``, with the meaning of :meth:`record_outcome`. Every item is checked
        and every skill resolved before anything is written, so a bad item (named by its position,
        from 1) leaves nothing behind; the rows are then one ``executemany`` (after one for the
        batch's tasks not stored yet)."""
        cleaned: dict[str, str] = {}  # a batch names few agents: check each name once
        items = [_outcome_item(n, item, cleaned) for n, item in enumerate(outcomes, 1)]
        if not items:
            return []
        now = self._ctx.now()
        known = self._known_agents()
        with transaction(self._conn):
            try:
                skill_ids = self._skill_ids([item[0] for item in items])
            except NotFoundError as exc:
                bad = next(n for n, item in enumerate(items, 1) if not self._exists(item[0]))
                raise NotFoundError(f"outcome {bad}: {exc}") from None
            named = sorted({item[2] for item in items if item[2] is not None})
            keys = self._agent_keys(named, known, now) if named else {}
            rows = []
            outs = []
            tasks: dict[int, str] = {}  # each task of the batch, with its first wording in the batch
            for (_, success, agent_id, task), skill_id in zip(items, skill_ids, strict=True):
                if agent_id is not None and task is None:
                    task = self._latest_query(agent_id, skill_id)
                digest = task_hash(task)
                key = task_key(digest)
                if key is not None and task is not None:
                    tasks.setdefault(key, task)
                rows.append((skill_id, None if agent_id is None else keys[agent_id], int(success), task, now, key))
                outs.append((skill_id, agent_id, success, task, digest))
            if tasks:
                self._conn.executemany(_INSERT_TASK_SQL, tasks.items())
            first = int(self._conn.execute("SELECT coalesce(max(id), 0) FROM skill_uses").fetchone()[0]) + 1
            ids = inserted_ids(self._conn.executemany(_INSERT_KEYED_USE_SQL, rows), first, len(rows))
        known.update(named)
        return [Outcome(i, o[0], o[1], o[2], o[3], o[4], now) for i, o in zip(ids, outs, strict=True)]

    def _agent_keys(self, agents: Sequence[str], known: set[str], now: float) -> dict[str, int]:
        """The keys of ``agents`` (a batch names few), read in the caller's write transaction: each is
        registered first unless the connection has seen it, or when the connection knew it but its
        registration was rolled back."""
        keys = {}
        for agent in agents:
            if agent not in known:
                self._ensure_agent(agent, now)
            row = self._conn.execute(_AGENT_KEY_SQL, (agent,)).fetchone()
            if row is None:
                self._ensure_agent(agent, now)
                row = self._conn.execute(_AGENT_KEY_SQL, (agent,)).fetchone()
            keys[agent] = int(row[0])
        return keys

    def _exists(self, ref: int | str) -> bool:
        try:
            self._skills.resolve_id(ref)
        except NotFoundError:
            return False
        return True

    def record_hits(self, hits: Sequence[Hit], query: str, agent: str | None = None) -> None:
        """One ``skill_hits`` / ``memory_hits`` row per returned entry with its rank (1 = first)."""
        agent_id = clean_agent_id(agent) if agent is not None else None
        now = self._ctx.now()
        skill_rows = [(h.id, agent_id, query, rank, now) for rank, h in enumerate(hits, 1) if h.kind == "skill"]
        memory_rows = [(h.id, agent_id, query, rank, now) for rank, h in enumerate(hits, 1) if h.kind == "memory"]
        with transaction(self._conn):
            if agent_id is not None:
                self._ensure_agent(agent_id, now)
            # An entry deleted by another process between the search's read and this write has no
            # row to point at any more: its hit is skipped (the others are still recorded).
            if skill_rows:
                if agent_id is not None:  # its outcomes now look for a hit's query first
                    _connection_set(self._conn, "kaos_searched_agents").add(agent_id)
                self._conn.executemany(
                    "INSERT INTO skill_hits (skill_id, agent_id, query, rank, created_at) "
                    "SELECT ?1, ?2, ?3, ?4, ?5 WHERE EXISTS (SELECT 1 FROM skills WHERE id = ?1)",
                    skill_rows,
                )
            if memory_rows:
                self._conn.executemany(
                    "INSERT INTO memory_hits (memory_id, agent_id, query, rank, created_at) "
                    "SELECT ?1, ?2, ?3, ?4, ?5 WHERE EXISTS (SELECT 1 FROM memories WHERE id = ?1)",
                    memory_rows,
                )
