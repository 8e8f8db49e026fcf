"""Each skill's record as the report shows it: the exact all-time counters beside a recent record.

The recent record is the success rate over a skill's last :data:`RECENT_OUTCOMES` outcome rows. It
stands in for the *effective* (aged) record (docs/cli.md) until that lands; :func:`skill_records`
is the one place that computes it, so switching the report to the effective record is a change here.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

RECENT_OUTCOMES = 10
# "Falling": the last min(RECENT_OUTCOMES, half its outcomes) of a skill succeed at least MIN_FALL less
# often than the outcomes before them, with at least MIN_EVIDENCE outcomes on each side. Comparing with
# the outcomes *before* the window (not the all-time rate, which contains the window) lets a skill with
# six outcomes that went from 3/3 to 0/3 count, and a skill that is rising never does.
MIN_EVIDENCE = 3
MIN_FALL = 0.2


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
    window_uses: int = 0  # the last min(RECENT_OUTCOMES, uses // 2) outcomes ...
    window_successes: int = 0
    before_uses: int = 0  # ... and every outcome before them
    before_successes: int = 0

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

    @property
    def fall(self) -> float:
        """How far the latest outcomes' rate fell below the earlier outcomes' rate: 0 without
        :data:`MIN_EVIDENCE` outcomes on each side or when it did not fall."""
        if self.window_uses < MIN_EVIDENCE or self.before_uses < MIN_EVIDENCE:
            return 0.0
        return max(0.0, self.before_successes / self.before_uses - self.window_successes / self.window_uses)


def skill_records(conn: sqlite3.Connection, limit: int | None = None) -> list[SkillRecord]:
    """Skills by uses (most first, ties by id), with all-time and recent records and search hits."""
    recent = {  # skill -> (recent n, recent successes, window n, window successes, all n, all successes)
        row[0]: row[1:]
        for row in conn.execute(
            "SELECT skill_id, sum(CASE WHEN rn <= ? THEN 1 ELSE 0 END),"
            " sum(CASE WHEN rn <= ? THEN success ELSE 0 END), sum(CASE WHEN rn <= min(?, total / 2) THEN 1 ELSE 0 END),"
            " sum(CASE WHEN rn <= min(?, total / 2) THEN success ELSE 0 END), count(*), sum(success) FROM ("
            " SELECT skill_id, success, row_number() OVER (PARTITION BY skill_id ORDER BY created_at DESC, id DESC)"
            " AS rn, count(*) OVER (PARTITION BY skill_id) AS total FROM skill_uses) AS ranked GROUP BY skill_id",
            (RECENT_OUTCOMES,) * 4,
        )
    }
    hits = dict(conn.execute("SELECT skill_id, count(*) FROM skill_hits GROUP BY skill_id"))
    sql = ("SELECT s.id, s.name, s.deprecated, coalesce(st.uses, 0), coalesce(st.successes, 0), st.last_used_at"
           " FROM skills s LEFT JOIN skill_stats st ON st.skill_id = s.id ORDER BY coalesce(st.uses, 0) DESC, s.id")
    rows = conn.execute(sql + (" LIMIT ?" if limit is not None else ""), (limit,) if limit is not None else ())
    out = []
    for sid, name, deprecated, uses, successes, last in rows:
        n, s, wn, ws, total, total_s = (int(x or 0) for x in recent.get(sid, (0, 0, 0, 0, 0, 0)))
        out.append(SkillRecord(sid, name, bool(deprecated), int(uses), int(successes), n, s,
                               int(hits.get(sid, 0)), last, wn, ws, total - wn, total_s - ws))
    return out


def falling(records: list[SkillRecord], top: int) -> list[SkillRecord]:
    """Skills whose latest outcomes fell at least :data:`MIN_FALL` below the ones before (see
    :attr:`SkillRecord.fall`), deprecated ones too, largest fall first, ties by id."""
    candidates = [r for r in records if r.fall >= MIN_FALL]
    return sorted(candidates, key=lambda r: (-r.fall, r.skill_id))[:top]
