"""The hot statements' PostgreSQL form, written by hand, and which of them need no database-wide lock.

Every other statement is derived from its SQLite text at run time (:mod:`.translate`) and runs in a
write transaction that holds the database's one advisory write lock, as SQLite's single writer
would. The statements here are the fleet's traffic (episode starts, outcomes, search hits, failure
records, coordination-log appends and votes): each is keyed by the exact SQLite text the stores
send, and its PostgreSQL text below was written and reviewed for READ COMMITTED, where every
statement sees what was committed before it started:

* ``opens``: a write transaction whose first statement is one of these begins **without** the
  database-wide lock. Later statements of the same transaction that are also here stay lock-free;
  the first one that is not takes the lock before it runs (``lazy``), so an unusual path (an
  unknown skill name, a new fingerprint's learned diagnosis) is as safe as before.
* ``guard``: a statement run first, in the same round trip, when inside a write transaction: a
  row lock or a transaction-scoped advisory lock on the *one thing* the read-modify-write that
  follows is about (a failure fingerprint, the coordination log), so two hosts on the same thing
  queue while hosts on different things do not.

Why each is safe without the database-wide lock is written beside it and in docs/postgres.md. A
statement whose SQLite text changes no longer matches its key: it then takes the translated,
locked path (slower, never wrong); ``tests/test_pg_hot.py`` fails until the key is updated.
"""

from __future__ import annotations

from dataclasses import dataclass

# The coordination log's lock: the same key its position trigger takes (postgres migration 0003).
LOG_LOCK = "SELECT pg_advisory_xact_lock(hashtextextended('kaos-dream coordination_log', 0))"
# One failure fingerprint's lock (two-int4 key space: never the same lock as the bigint write lock).
FINGERPRINT_LOCK = "SELECT pg_advisory_xact_lock(23500, hashtext(%(p1)s))"
# One principal's lock, taken by an episode start before it counts that principal's open episodes.
PRINCIPAL_LOCK = "SELECT pg_advisory_xact_lock(23501, hashtext(%(p1)s))"


@dataclass(frozen=True)
class Hot:
    """One hot statement: its PostgreSQL text, the verb and written table (as a translation reports
    them), the column returned as ``lastrowid`` by a single execute, and its locking role."""

    sql: str
    verb: str
    table: str | None = None
    returning: str | None = None
    opens: bool = True
    guard: str | None = None


HOT: dict[str, Hot] = {
    # -- episodes: start, agents registered on first use ----------------------------------------------
    # A new primary key: two hosts starting the same id conflict on the unique index (one wins, the
    # other gets ConflictError), exactly as under the lock.
    # A start counts its principal's open episodes against the cap and then inserts (a read-modify-
    # write): the principal's own lock first (guard), so two starts of one principal queue while
    # different principals do not, and the count sees every start committed before it.
    "SELECT count(*) FROM (SELECT 1 FROM agents WHERE state = 'running' AND principal = ?1 AND started_at >= ?2 "
    "LIMIT ?3) AS o": Hot(
        "SELECT count(*) FROM (SELECT 1 FROM agents WHERE state = 'running' AND principal = %(p1)s "
        "AND started_at >= %(p2)s LIMIT %(p3)s) AS o", "SELECT", guard=PRINCIPAL_LOCK),
    "INSERT INTO agents (id, name, started_at, principal) VALUES (?, ?, ?, ?)": Hot(
        "INSERT INTO agents (id, name, started_at, principal) VALUES (%(p1)s, %(p2)s, %(p3)s, %(p4)s)",
        "INSERT", "agents"),
    "INSERT OR IGNORE INTO agents (id, started_at, principal) VALUES (?, ?, ?)": Hot(
        "INSERT INTO agents (id, started_at, principal) VALUES (%(p1)s, %(p2)s, %(p3)s) ON CONFLICT DO NOTHING",
        "INSERT", "agents"),
    "INSERT OR IGNORE INTO agents (id, state, started_at, ended_at, conclusion, processed_at, principal)"
    " VALUES (?, 'failed', ?, ?, ?, ?, ?)": Hot(
        "INSERT INTO agents (id, state, started_at, ended_at, conclusion, processed_at, principal) "
        "VALUES (%(p1)s, 'failed', %(p2)s, %(p3)s, %(p4)s, %(p5)s, %(p6)s) ON CONFLICT DO NOTHING",
        "INSERT", "agents"),
    # -- skill references (an outcome's full path resolves its skill first): plain reads.
    "SELECT id FROM skills WHERE id = ?": Hot("SELECT id FROM skills WHERE id = %(p1)s", "SELECT"),
    "SELECT id FROM skills WHERE name = ?": Hot("SELECT id FROM skills WHERE name = %(p1)s", "SELECT"),
    # An episode read back after its start (inside a caller's transaction too). Not ``opens``: as the
    # first statement of a transaction it is an episode end's, which keeps the database-wide lock.
    "SELECT * FROM agents WHERE id = ?": Hot("SELECT * FROM agents WHERE id = %(p1)s", "SELECT", opens=False),
    # -- outcomes: one insert; the counters follow by trigger as atomic upserts (uses = uses + 1), which
    # READ COMMITTED applies to the latest committed row version under its row lock: none is lost.
    "SELECT query FROM skill_hits WHERE agent_id = ? AND skill_id = ? ORDER BY id DESC LIMIT 1": Hot(
        "SELECT query FROM skill_hits WHERE agent_id = %(p1)s AND skill_id = %(p2)s ORDER BY id DESC LIMIT 1",
        "SELECT"),
    "INSERT INTO skill_uses (skill_id, agent_key, success, task_id, task, created_at) VALUES (?1, CASE WHEN ?2 IS "
    "NULL THEN NULL ELSE coalesce((SELECT a.id FROM agent_keys AS a WHERE a.agent_id = ?2), -1) END, ?3, NULL, ?4,"
    " ?5)": Hot(
        "INSERT INTO skill_uses (skill_id, agent_key, success, task_id, task, created_at) "
        "VALUES (%(p1)s, CASE WHEN %(p2)s IS NULL THEN NULL "
        "ELSE coalesce((SELECT a.id FROM agent_keys AS a WHERE a.agent_id = %(p2)s), -1) END, "
        "%(p3)s, NULL, %(p4)s, %(p5)s)", "INSERT", "skill_uses", "id"),
    "INSERT INTO skill_uses (skill_id, agent_key, success, task_id, task, created_at) SELECT ?1, CASE WHEN ?2 IS "
    "NULL THEN NULL ELSE coalesce((SELECT a.id FROM agent_keys AS a WHERE a.agent_id = ?2), -1) END, ?3, t.id, "
    "CASE WHEN t.text = ?4 THEN NULL ELSE ?4 END, ?5 FROM tasks AS t WHERE t.hash = ?6": Hot(
        "INSERT INTO skill_uses (skill_id, agent_key, success, task_id, task, created_at) "
        "SELECT %(p1)s, CASE WHEN %(p2)s IS NULL THEN NULL "
        "ELSE coalesce((SELECT a.id FROM agent_keys AS a WHERE a.agent_id = %(p2)s), -1) END, "
        "%(p3)s, t.id, CASE WHEN t.text = %(p4)s THEN NULL ELSE %(p4)s END, %(p5)s "
        "FROM tasks AS t WHERE t.hash = %(p6)s", "INSERT", "skill_uses", "id"),
    "INSERT INTO skill_uses (skill_id, agent_key, success, task_id, task, created_at) SELECT ?1, CASE WHEN ?2 IS "
    "NULL THEN NULL ELSE coalesce((SELECT a.id FROM agent_keys AS a WHERE a.agent_id = ?2), -1) END, ?3, t.id, "
    "CASE WHEN t.text = ?4 THEN NULL ELSE ?4 END, ?5 FROM (SELECT CAST(?6 AS INTEGER) AS hash) AS k LEFT JOIN "
    "tasks AS t ON t.hash = k.hash": Hot(
        "INSERT INTO skill_uses (skill_id, agent_key, success, task_id, task, created_at) "
        "SELECT %(p1)s, CASE WHEN %(p2)s IS NULL THEN NULL "
        "ELSE coalesce((SELECT a.id FROM agent_keys AS a WHERE a.agent_id = %(p2)s), -1) END, "
        "%(p3)s, t.id, CASE WHEN t.text = %(p4)s THEN NULL ELSE %(p4)s END, %(p5)s "
        "FROM (SELECT CAST(%(p6)s AS BIGINT) AS hash) AS k LEFT JOIN tasks AS t ON t.hash = k.hash",
        "INSERT", "skill_uses", "id"),
    # A task's first wording wins the unique hash; a racing second insert does nothing.
    "INSERT INTO tasks (hash, text) VALUES (?, ?) ON CONFLICT (hash) DO NOTHING": Hot(
        "INSERT INTO tasks (hash, text) VALUES (%(p1)s, %(p2)s) ON CONFLICT (hash) DO NOTHING", "INSERT", "tasks"),
    # -- search hits: appended rows; an entry deleted meanwhile fails the foreign key (its row is locked
    # FOR KEY SHARE by the insert's check), as it would have failed the EXISTS under the lock.
    "INSERT INTO skill_hits (skill_id, agent_id, query, rank, created_at) SELECT ?1, ?2, ?3, ?4, ?5 WHERE EXISTS "
    "(SELECT 1 FROM skills WHERE id = ?1)": Hot(
        "INSERT INTO skill_hits (skill_id, agent_id, query, rank, created_at) "
        "SELECT %(p1)s, %(p2)s, %(p3)s, %(p4)s, %(p5)s WHERE EXISTS (SELECT 1 FROM skills WHERE id = %(p1)s)",
        "INSERT", "skill_hits", "id"),
    "INSERT INTO memory_hits (memory_id, agent_id, query, rank, created_at) SELECT ?1, ?2, ?3, ?4, ?5 WHERE EXISTS "
    "(SELECT 1 FROM memories WHERE id = ?1)": Hot(
        "INSERT INTO memory_hits (memory_id, agent_id, query, rank, created_at) "
        "SELECT %(p1)s, %(p2)s, %(p3)s, %(p4)s, %(p5)s WHERE EXISTS (SELECT 1 FROM memories WHERE id = %(p1)s)",
        "INSERT", "memory_hits", "id"),
    # -- failure records: the fingerprint's own lock first (guard), then every read-modify-write of that
    # fingerprint (new or not, occurrence counters, the systemic-alert count and raise) runs one host
    # at a time; each later statement's snapshot is taken after the lock, so it sees the previous
    # holder's commit: one alert per incident, counters exact. Other fingerprints do not wait.
    "SELECT id FROM failure_fingerprints WHERE hash = ?": Hot(
        "SELECT id FROM failure_fingerprints WHERE hash = %(p1)s", "SELECT", guard=FINGERPRINT_LOCK),
    "SELECT category, root_cause, suggested_action, confidence, diagnostic_method, diagnoser FROM "
    "failure_fingerprints WHERE id = ?": Hot(
        "SELECT category, root_cause, suggested_action, confidence, diagnostic_method, diagnoser "
        "FROM failure_fingerprints WHERE id = %(p1)s", "SELECT"),
    "INSERT INTO failure_fingerprints (hash, algorithm, tool, exception_type, normalized, key_text, example, "
    "occurrences, first_seen, last_seen) VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?, ?)": Hot(
        "INSERT INTO failure_fingerprints (hash, algorithm, tool, exception_type, normalized, key_text, example, "
        "occurrences, first_seen, last_seen) VALUES (%(p1)s, %(p2)s, %(p3)s, %(p4)s, %(p5)s, %(p6)s, %(p7)s, 0, "
        "%(p8)s, %(p9)s)", "INSERT", "failure_fingerprints", "id", opens=False),
    "UPDATE failure_fingerprints SET category = ?, root_cause = ?, suggested_action = ?, confidence = ?, "
    "diagnostic_method = ?, diagnoser = ?, diagnosed_at = ? WHERE id = ?": Hot(
        "UPDATE failure_fingerprints SET category = %(p1)s, root_cause = %(p2)s, suggested_action = %(p3)s, "
        "confidence = %(p4)s, diagnostic_method = %(p5)s, diagnoser = %(p6)s, diagnosed_at = %(p7)s "
        "WHERE id = %(p8)s", "UPDATE", "failure_fingerprints", opens=False),
    "INSERT INTO failure_diagnoses (fingerprint_id, category, root_cause, suggested_action, confidence, method, "
    "diagnoser, decided_by, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)": Hot(
        "INSERT INTO failure_diagnoses (fingerprint_id, category, root_cause, suggested_action, confidence, method, "
        "diagnoser, decided_by, created_at) VALUES (%(p1)s, %(p2)s, %(p3)s, %(p4)s, %(p5)s, %(p6)s, %(p7)s, "
        "%(p8)s, %(p9)s)", "INSERT", "failure_diagnoses", "id", opens=False),
    "INSERT INTO failure_occurrences (fingerprint_id, agent_id, message_sample, message_hash, message_chars, "
    "created_at) VALUES (?, ?, ?, ?, ?, ?)": Hot(
        "INSERT INTO failure_occurrences (fingerprint_id, agent_id, message_sample, message_hash, message_chars, "
        "created_at) VALUES (%(p1)s, %(p2)s, %(p3)s, %(p4)s, %(p5)s, %(p6)s)", "INSERT", "failure_occurrences",
        "id"),
    "UPDATE failure_fingerprints SET occurrences = occurrences + 1, first_seen = min(first_seen, ?), "
    "last_seen = max(last_seen, ?) WHERE id = ?": Hot(
        "UPDATE failure_fingerprints SET occurrences = occurrences + 1, first_seen = LEAST(first_seen, %(p1)s), "
        "last_seen = GREATEST(last_seen, %(p2)s) WHERE id = %(p3)s", "UPDATE", "failure_fingerprints"),
    "SELECT id, status, raised_at, resolved_at FROM systemic_alerts WHERE fingerprint_id = ? "
    "ORDER BY raised_at DESC, id DESC LIMIT 1": Hot(
        "SELECT id, status, raised_at, resolved_at FROM systemic_alerts WHERE fingerprint_id = %(p1)s "
        "ORDER BY raised_at DESC, id DESC LIMIT 1", "SELECT"),
    "SELECT COUNT(DISTINCT agent_id) FROM failure_occurrences WHERE fingerprint_id = ? AND agent_id IS NOT NULL"
    " AND created_at >= ? AND created_at <= ?": Hot(
        "SELECT COUNT(DISTINCT agent_id) FROM failure_occurrences WHERE fingerprint_id = %(p1)s "
        "AND agent_id IS NOT NULL AND created_at >= %(p2)s AND created_at <= %(p3)s", "SELECT"),
    "SELECT COUNT(DISTINCT agent_id) FROM failure_occurrences WHERE fingerprint_id = ? AND agent_id IS NOT NULL"
    " AND created_at > ? AND created_at <= ?": Hot(
        "SELECT COUNT(DISTINCT agent_id) FROM failure_occurrences WHERE fingerprint_id = %(p1)s "
        "AND agent_id IS NOT NULL AND created_at > %(p2)s AND created_at <= %(p3)s", "SELECT"),
    "UPDATE systemic_alerts SET agent_count = max(agent_count, ?), last_seen_at = max(last_seen_at, ?)"
    " WHERE id = ?": Hot(
        "UPDATE systemic_alerts SET agent_count = GREATEST(agent_count, %(p1)s), "
        "last_seen_at = GREATEST(last_seen_at, %(p2)s) WHERE id = %(p3)s", "UPDATE", "systemic_alerts"),
    "INSERT INTO systemic_alerts (fingerprint_id, agent_count, threshold, window_s, raised_at, last_seen_at)"
    " VALUES (?, ?, ?, ?, ?, ?)": Hot(
        "INSERT INTO systemic_alerts (fingerprint_id, agent_count, threshold, window_s, raised_at, last_seen_at) "
        "VALUES (%(p1)s, %(p2)s, %(p3)s, %(p4)s, %(p5)s, %(p6)s)", "INSERT", "systemic_alerts", "id"),
    # -- coordination log: positions are numbered gap-free by the position trigger under the log's own
    # lock; a vote's checks (intent open, not voted yet) take that lock first (guard), so a vote and a
    # decision, or two votes of one agent, cannot both pass their checks.
    "INSERT INTO coordination_log (kind, agent, meta, created_at, action, action_key) VALUES (?, ?, ?, ?, ?, ?) "
    "RETURNING position": Hot(
        "INSERT INTO coordination_log (kind, agent, meta, created_at, action, action_key) "
        "VALUES (%(p1)s, %(p2)s, %(p3)s, %(p4)s, %(p5)s, %(p6)s) RETURNING position", "INSERT",
        "coordination_log"),
    "INSERT INTO coordination_log (kind, agent, meta, created_at, intent, approve, reason) "
    "VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING position": Hot(
        "INSERT INTO coordination_log (kind, agent, meta, created_at, intent, approve, reason) "
        "VALUES (%(p1)s, %(p2)s, %(p3)s, %(p4)s, %(p5)s, %(p6)s, %(p7)s) RETURNING position", "INSERT",
        "coordination_log"),
    "SELECT * FROM coordination_log WHERE position = ?": Hot(
        "SELECT * FROM coordination_log WHERE position = %(p1)s", "SELECT", guard=LOG_LOCK),
    "SELECT * FROM coordination_log WHERE intent = ? AND kind = ? ORDER BY position LIMIT 1": Hot(
        "SELECT * FROM coordination_log WHERE intent = %(p1)s AND kind = %(p2)s ORDER BY position LIMIT 1",
        "SELECT", guard=LOG_LOCK),
    "SELECT 1 FROM coordination_log WHERE intent = ? AND kind = 'vote' AND agent = ?": Hot(
        "SELECT 1 FROM coordination_log WHERE intent = %(p1)s AND kind = 'vote' AND agent = %(p2)s", "SELECT",
        guard=LOG_LOCK),
}


def lookup(sql: str) -> Hot | None:
    """The hand-written form of ``sql``, or None when it takes the translated path."""
    return HOT.get(sql)
