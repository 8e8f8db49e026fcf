"""The coordination log: an append-only record of intents, votes, decisions, commits, aborts and
results, shared by every agent working on one library.

Positions are SQLite rowids allocated inside ``BEGIN IMMEDIATE``, so concurrent appenders get
strictly increasing positions with no gaps (a rolled-back append frees its position for the next
one). Triggers in the schema refuse updates and deletes.

Protocol, checked on append: votes and a decision need an open intent (one vote per agent, none
after the decision); a decision tallies the votes cast (approved iff approvals outnumber
rejections); commit needs an approved decision; abort is allowed until commit; a result needs a
commit.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from . import limits
from .errors import ConflictError, InvalidInputError, NotFoundError
from .memories import parse_metadata
from .names import clean_label
from .store import transaction
from .store.records import as_dict, from_row

if TYPE_CHECKING:
    from .store.context import StoreContext

ENTRY_KINDS = ("intent", "vote", "decision", "commit", "abort", "result")
MAX_ACTION = limits.ACTION
MAX_AGENT = limits.NAME


@dataclass(frozen=True)
class LogEntry:
    position: int
    kind: str
    agent: str
    intent: int | None
    action: str | None
    action_key: str | None
    approve: bool | None
    reason: str | None
    meta: dict[str, Any]
    policy_id: int | None
    created_at: float

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> LogEntry:
        approve = None if row["approve"] is None else bool(row["approve"])
        return from_row(cls, row, approve=approve, meta=json.loads(row["meta"]))

    def to_dict(self) -> dict[str, Any]:
        return as_dict(self)


@dataclass(frozen=True)
class AutoResult:
    """What `intent_auto` did: the intent, and the policy decision when a policy matched."""

    intent: LogEntry
    policy_id: int | None
    vote: LogEntry | None
    decision: LogEntry | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "intent": self.intent.to_dict(),
            "decided_by_policy": self.policy_id,
            "vote": None if self.vote is None else self.vote.to_dict(),
            "decision": None if self.decision is None else self.decision.to_dict(),
        }


_SPACES = re.compile(r"\s+")


def normalise_action(action: str) -> str:
    """The key policies match on: case-folded, whitespace collapsed, trailing punctuation dropped."""
    key = _SPACES.sub(" ", action.casefold()).strip().rstrip(".!;,").strip()
    if not key:
        raise InvalidInputError("action must not be empty")
    return key


def _clean_agent(agent: str) -> str:
    return clean_label(agent, "agent", MAX_AGENT, one_rule=True)


def _clean_action(action: str) -> str:
    if "\x00" in action or len(action) > MAX_ACTION:
        raise InvalidInputError(f"action must be at most {MAX_ACTION} characters without NUL")
    return action.strip()


class CoordinationLog:
    """Append and read the log; one instance per :class:`Library`."""

    def __init__(self, ctx: StoreContext) -> None:
        self._ctx = ctx

    @property
    def _conn(self) -> sqlite3.Connection:
        return self._ctx.conn

    # -- appending --------------------------------------------------------------------------------
    def _append(self, kind: str, agent: str, **values: Any) -> LogEntry:
        meta = values.pop("meta", None)
        if isinstance(values.get("reason"), str):
            limits.capped(values["reason"], "reason", limits.REASON)
        columns = {
            "kind": kind,
            "agent": agent,
            "meta": json.dumps(parse_metadata(meta), sort_keys=True),
            "created_at": self._ctx.now(),
            **values,
        }
        names = ", ".join(columns)
        marks = ", ".join("?" for _ in columns)
        # RETURNING, not lastrowid: on PostgreSQL the position comes from a trigger (gap-free under the
        # log's lock), not from an identity column the cursor could report.
        row = self._conn.execute(f"INSERT INTO coordination_log ({names}) VALUES ({marks}) RETURNING position",
                                 list(columns.values())).fetchone()
        return self.get(int(row[0]))

    def intent(self, agent: str, action: str, meta: str | Mapping[str, Any] | None = None) -> LogEntry:
        """Append an intent: ``agent`` announces ``action`` for others to vote on."""
        agent, action = _clean_agent(agent), _clean_action(action)
        key = normalise_action(action)
        with transaction(self._conn):
            return self._append("intent", agent, action=action, action_key=key, meta=meta)

    def vote(self, agent: str, intent: int, approve: bool, reason: str | None = None) -> LogEntry:
        """Append ``agent``'s vote on ``intent``; one vote per agent and intent."""
        agent = _clean_agent(agent)
        with transaction(self._conn):
            self._require_open_intent(intent)
            if self._conn.execute(
                "SELECT 1 FROM coordination_log WHERE intent = ? AND kind = 'vote' AND agent = ?", (intent, agent)
            ).fetchone():
                raise ConflictError(f"{agent} already voted on intent {intent}")
            return self._append("vote", agent, intent=intent, approve=int(approve), reason=reason)

    def decide(self, intent: int, agent: str = "kaos") -> LogEntry:
        """Close the vote: approved iff approvals outnumber rejections (a tie is a rejection)."""
        agent = _clean_agent(agent)
        with transaction(self._conn):
            self._require_open_intent(intent)
            approvals, rejections = self._conn.execute(
                "SELECT coalesce(sum(approve), 0), coalesce(sum(1 - approve), 0) FROM coordination_log "
                "WHERE intent = ? AND kind = 'vote'",
                (intent,),
            ).fetchone()
            if approvals + rejections == 0:
                raise ConflictError(f"intent {intent} has no votes to decide on")
            approved = approvals > rejections
            reason = f"{approvals} approve, {rejections} reject"
            return self._append("decision", agent, intent=intent, approve=int(approved), reason=reason)

    def commit(self, intent: int, agent: str, meta: str | Mapping[str, Any] | None = None) -> LogEntry:
        """Append a commit of ``intent`` by ``agent``."""
        agent = _clean_agent(agent)
        with transaction(self._conn):
            decision = self._entry_of(intent, "decision")
            if decision is None or not decision.approve:
                raise ConflictError(f"intent {intent} has no approved decision to commit")
            self._require_not(intent, ("commit", "abort"))
            return self._append("commit", agent, intent=intent, meta=meta)

    def abort(self, intent: int, agent: str, reason: str | None = None) -> LogEntry:
        """Append an abort of ``intent`` by ``agent``."""
        agent = _clean_agent(agent)
        with transaction(self._conn):
            self._require_intent(intent)
            self._require_not(intent, ("commit", "abort"))
            return self._append("abort", agent, intent=intent, reason=reason)

    def result(self, intent: int, agent: str, meta: str | Mapping[str, Any] | None = None) -> LogEntry:
        """Append the result of ``intent`` as reported by ``agent``."""
        agent = _clean_agent(agent)
        with transaction(self._conn):
            if self._entry_of(intent, "commit") is None:
                raise ConflictError(f"intent {intent} was not committed; a result needs a commit")
            return self._append("result", agent, intent=intent, meta=meta)

    def intent_auto(self, agent: str, action: str, meta: str | Mapping[str, Any] | None = None) -> AutoResult:
        """Append an intent; when an enabled policy matches its action, approve and decide it at once,
        marking the vote and decision as policy-made and counting the policy's use."""
        agent, action = _clean_agent(agent), _clean_action(action)
        key = normalise_action(action)
        with transaction(self._conn):
            entry = self._append("intent", agent, action=action, action_key=key, meta=meta)
            policy = self._conn.execute(
                "SELECT id FROM policies WHERE action_key = ? AND status = 'enabled'", (key,)
            ).fetchone()
            if policy is None:
                return AutoResult(entry, None, None, None)
            policy_id = int(policy["id"])
            by = f"policy:{policy_id}"
            reason = f"auto-approved by policy {policy_id}"
            vote = self._append("vote", by, intent=entry.position, approve=1, reason=reason, policy_id=policy_id)
            decision = self._append(
                "decision", by, intent=entry.position, approve=1, reason=reason, policy_id=policy_id
            )
            now = self._ctx.now()
            self._conn.execute(
                "UPDATE policies SET applied_count = applied_count + 1, last_applied_at = ?, updated_at = ? "
                "WHERE id = ?",
                (now, now, policy_id),
            )
            return AutoResult(entry, policy_id, vote, decision)

    # -- reading ----------------------------------------------------------------------------------
    def get(self, position: int) -> LogEntry:
        """The entry at ``position``; NotFoundError when there is none."""
        row = self._conn.execute("SELECT * FROM coordination_log WHERE position = ?", (position,)).fetchone()
        if row is None:
            raise NotFoundError(f"no log entry at position {position}")
        return LogEntry.from_row(row)

    def tail(self, n: int = 20, *, upto: int | None = None) -> list[LogEntry]:
        """The last ``n`` entries (at or before position ``upto`` when given), oldest first."""
        if n < 0:
            raise InvalidInputError("-n must not be negative")
        rows = self._conn.execute(
            "SELECT * FROM (SELECT * FROM coordination_log WHERE position <= ? ORDER BY position DESC LIMIT ?)"
            " ORDER BY position",
            (2**63 - 1 if upto is None else upto, n),
        ).fetchall()
        return [LogEntry.from_row(r) for r in rows]

    def last_position(self) -> int:
        """The position of the newest entry (0 for an empty log): where a follower starts waiting."""
        return int(self._conn.execute("SELECT coalesce(max(position), 0) FROM coordination_log").fetchone()[0])

    def tail_and_cursor(self, n: int = 20) -> tuple[list[LogEntry], int]:
        """The last ``n`` entries and the position after which a follower must look for new ones.

        The cursor is the newest position when this was called, not the last entry shown: with
        ``n = 0`` (or any ``n`` smaller than the log) following from the last entry *shown* would
        replay older history as if it were new. The cursor is read first and the entries are taken
        at or before it, so an entry appended in between is reported once, by the follower."""
        cursor = self.last_position()
        return self.tail(n, upto=cursor), cursor

    def after(self, position: int, limit: int = 1000) -> list[LogEntry]:
        """Entries after ``position``, oldest first, at most ``limit`` (what `log tail --follow` polls)."""
        rows = self._conn.execute(
            "SELECT * FROM coordination_log WHERE position > ? ORDER BY position LIMIT ?", (position, limit)
        ).fetchall()
        return [LogEntry.from_row(r) for r in rows]

    def thread(self, intent: int) -> list[LogEntry]:
        """An intent followed by every entry about it, in log order."""
        self._require_intent(intent)
        rows = self._conn.execute(
            "SELECT * FROM coordination_log WHERE position = ? OR intent = ? ORDER BY position", (intent, intent)
        ).fetchall()
        return [LogEntry.from_row(r) for r in rows]

    def count(self) -> int:
        """Number of entries in the log."""
        return int(self._conn.execute("SELECT count(*) FROM coordination_log").fetchone()[0])

    # -- protocol checks --------------------------------------------------------------------------
    def _require_intent(self, intent: int) -> LogEntry:
        entry = self.get(intent)
        if entry.kind != "intent":
            raise InvalidInputError(f"log entry {intent} is a {entry.kind}, not an intent")
        return entry

    def _entry_of(self, intent: int, kind: str) -> LogEntry | None:
        self._require_intent(intent)
        row = self._conn.execute(
            "SELECT * FROM coordination_log WHERE intent = ? AND kind = ? ORDER BY position LIMIT 1", (intent, kind)
        ).fetchone()
        return None if row is None else LogEntry.from_row(row)

    def _require_open_intent(self, intent: int) -> None:
        if self._entry_of(intent, "decision") is not None:
            raise ConflictError(f"intent {intent} is already decided")
        self._require_not(intent, ("abort",))

    def _require_not(self, intent: int, kinds: tuple[str, ...]) -> None:
        for kind in kinds:
            if self._entry_of(intent, kind) is not None:
                raise ConflictError(f"intent {intent} already has a {kind}")
