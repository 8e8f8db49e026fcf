"""Policies: actions the team reliably approves, mined from the coordination log.

An action (normalised text) whose human-decided intents were approved at least
``policy_min_approval`` of the time over at least ``policy_min_support`` intents becomes a policy:
*proposed* by a dry-run dream, *enabled* by an applying one (or by a person). An enabled or proposed
policy whose approval falls below the threshold is *demoted* in either mode, since demotion only
takes automation away. Decisions a policy made itself never count, so a policy cannot reinforce
itself. A policy a person disabled is never re-enabled automatically.
"""

from __future__ import annotations

import sqlite3
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from . import limits
from .errors import InvalidInputError, NotFoundError
from .store import transaction

if TYPE_CHECKING:
    from .store.context import StoreContext

POLICY_STATES = ("proposed", "enabled", "disabled", "demoted")


@dataclass(frozen=True)
class Policy:
    id: int
    action_key: str
    status: str
    approval_rate: float
    support: int
    applied_count: int
    last_applied_at: float | None
    status_by: str
    status_reason: str | None
    created_at: float
    updated_at: float

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> Policy:
        return cls(**{k: row[k] for k in row.keys()})  # noqa: SIM118 - sqlite3.Row needs keys()

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class MiningReport:
    """What one mining pass found and did (ids of the policies concerned)."""

    applied: bool
    proposed: list[int] = field(default_factory=list)
    enabled: list[int] = field(default_factory=list)
    demoted: list[int] = field(default_factory=list)
    actions_seen: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def action_stats(conn: sqlite3.Connection) -> dict[str, tuple[int, int]]:
    """Per action key: (approved, decided) over intents decided by people, not by policies."""
    rows = conn.execute(
        """
        SELECT i.action_key, sum(d.approve), count(*)
        FROM coordination_log AS i
        JOIN coordination_log AS d ON d.intent = i.position AND d.kind = 'decision'
        WHERE i.kind = 'intent' AND d.policy_id IS NULL
        GROUP BY i.action_key
        ORDER BY i.action_key
        """
    ).fetchall()
    return {key: (int(approved), int(decided)) for key, approved, decided in rows}


class Policies:
    """Mining, listing and human control of policies; one instance per :class:`Library`."""

    def __init__(self, ctx: StoreContext) -> None:
        self._ctx = ctx

    @property
    def _conn(self) -> sqlite3.Connection:
        return self._ctx.conn

    def list(self, status: str | None = None) -> list[Policy]:
        """Policies in id order, optionally in one ``status``."""
        if status is not None and status not in POLICY_STATES:
            raise InvalidInputError(f"unknown policy status {status!r}: use one of {', '.join(POLICY_STATES)}")
        sql, params = "SELECT * FROM policies", []
        if status is not None:
            sql += " WHERE status = ?"
            params.append(status)
        return [Policy.from_row(r) for r in self._conn.execute(sql + " ORDER BY id", params)]

    def get(self, ref: int | str) -> Policy:
        """One policy by id or action key; NotFoundError when there is none."""
        if isinstance(ref, str):
            limits.capped(ref, "the policy reference", limits.ACTION)
        if isinstance(ref, str) and not ref.strip().isdigit():
            from .coordination import normalise_action

            row = self._conn.execute("SELECT * FROM policies WHERE action_key = ?", (normalise_action(ref),)).fetchone()
        elif int(ref) > 2**63 - 1:  # no row has such an id (and SQLite cannot bind it)
            row = None
        else:
            row = self._conn.execute("SELECT * FROM policies WHERE id = ?", (int(ref),)).fetchone()
        if row is None:
            raise NotFoundError(f"no policy {ref!r}")
        return Policy.from_row(row)

    def _set_status(self, ref: int | str, status: str, by: str, reason: str | None) -> Policy:
        limits.capped_optional(reason, "reason", limits.REASON)
        limits.capped(by, "by", limits.NAME)
        with transaction(self._conn):
            policy = self.get(ref)
            self._conn.execute(
                "UPDATE policies SET status = ?, status_by = ?, status_reason = ?, updated_at = ? WHERE id = ?",
                (status, by, reason, self._ctx.now(), policy.id),
            )
        return self.get(policy.id)

    def enable(self, ref: int | str, by: str = "human", reason: str | None = None) -> Policy:
        """Enable a policy so matching intents are approved at once."""
        return self._set_status(ref, "enabled", by, reason)

    def disable(self, ref: int | str, by: str = "human", reason: str | None = None) -> Policy:
        """Disable a policy (by a person); it is never re-enabled automatically."""
        return self._set_status(ref, "disabled", by, reason)

    def mine(self, *, apply: bool) -> MiningReport:
        """One mining pass over the log (the dream's policies phase)."""
        settings = self._ctx.settings
        threshold, min_support = settings.policy_min_approval, settings.policy_min_support
        report = MiningReport(applied=apply)
        now = self._ctx.now()
        with transaction(self._conn):
            stats = action_stats(self._conn)
            report.actions_seen = len(stats)
            existing = {p.action_key: p for p in self.list()}
            for key, (approved, decided) in stats.items():
                rate = approved / decided
                policy = existing.get(key)
                qualifies = decided >= min_support and rate >= threshold
                if policy is None:
                    if not qualifies:
                        continue
                    status = "enabled" if apply else "proposed"
                    cur = self._conn.execute(
                        "INSERT INTO policies (action_key, status, approval_rate, support, status_by, status_reason, "
                        "created_at, updated_at) VALUES (?, ?, ?, ?, 'dream', ?, ?, ?)",
                        (key, status, rate, decided, f"approved {approved}/{decided}", now, now),
                    )
                    (report.enabled if apply else report.proposed).append(int(cur.lastrowid))
                    continue
                self._conn.execute(
                    "UPDATE policies SET approval_rate = ?, support = ?, updated_at = ? WHERE id = ?",
                    (rate, decided, now, policy.id),
                )
                if policy.status in ("enabled", "proposed") and rate < threshold:
                    self._update_status(policy.id, "demoted", f"approval fell to {approved}/{decided}", now)
                    report.demoted.append(policy.id)
                elif policy.status in ("proposed", "demoted") and qualifies:
                    status = "enabled" if apply else "proposed"
                    if status != policy.status:
                        self._update_status(policy.id, status, f"approved {approved}/{decided}", now)
                    (report.enabled if apply else report.proposed).append(policy.id)
        return report

    def _update_status(self, policy_id: int, status: str, reason: str, now: float) -> None:
        self._conn.execute(
            "UPDATE policies SET status = ?, status_by = 'dream', status_reason = ?, updated_at = ? WHERE id = ?",
            (status, reason, now, policy_id),
        )
