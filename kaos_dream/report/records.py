"""Each skill's record as the report shows it: the exact all-time counters beside a recent record.

The recent record is the success rate over a skill's last :data:`RECENT_OUTCOMES` outcome rows. It
stands in for the *effective* (aged) record (docs/cli.md) until that lands; :func:`skill_records`
is the one place that computes it, so switching the report to the effective record is a change here.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

RECENT_OUTCOMES = 10


@dataclass(frozen=True)
class SkillRecord:
    skill_id: int
    name: str
    deprecated: bool
    uses: int
    successes: int
    recent_uses: int
    recent_successes: int
    hits: int
    last_used_at: float | None

    @property
    def rate(self) -> float | None:
        return self.successes / self.uses if self.uses else None

    @property
    def recent_rate(self) -> float | None:
        return self.recent_successes / self.recent_uses if self.recent_uses else None

    @property
    def drop(self) -> float:
        """How far the recent rate fell below the all-time rate (0 when it did not)."""
        if self.rate is None or self.recent_rate is None:
            return 0.0
        return max(0.0, self.rate - self.recent_rate)


def skill_records(conn: sqlite3.Connection, limit: int | None = None) -> list[SkillRecord]:
    """Skills by uses (most first, ties by id), with all-time and recent records and search hits."""
    recent = {
        sid: (n, s)
        for sid, n, s in conn.execute(
            "SELECT skill_id, count(*), sum(success) FROM ("
            " SELECT skill_id, success, row_number() OVER (PARTITION BY skill_id ORDER BY created_at DESC, id DESC)"
            " AS rn FROM skill_uses) WHERE rn <= ? GROUP BY skill_id",
            (RECENT_OUTCOMES,),
        )
    }
    hits = dict(conn.execute("SELECT skill_id, count(*) FROM skill_hits GROUP BY skill_id"))
    sql = ("SELECT s.id, s.name, s.deprecated, coalesce(st.uses, 0), coalesce(st.successes, 0), st.last_used_at"
           " FROM skills s LEFT JOIN skill_stats st ON st.skill_id = s.id ORDER BY coalesce(st.uses, 0) DESC, s.id")
    rows = conn.execute(sql + (" LIMIT ?" if limit is not None else ""), (limit,) if limit is not None else ())
    out = []
    for sid, name, deprecated, uses, successes, last in rows:
        n, s = recent.get(sid, (0, 0))
        out.append(SkillRecord(sid, name, bool(deprecated), int(uses), int(successes), int(n), int(s or 0),
                               int(hits.get(sid, 0)), last))
    return out


def falling(records: list[SkillRecord], top: int, min_uses: int = RECENT_OUTCOMES + 1) -> list[SkillRecord]:
    """Skills whose recent rate fell furthest below their all-time rate (only those with more history
    than the recent window, so the two records can differ), largest drop first, ties by id."""
    candidates = [r for r in records if r.uses >= min_uses and r.drop > 0]
    return sorted(candidates, key=lambda r: (-r.drop, r.skill_id))[:top]
