"""The hot statements' PostgreSQL form, written by hand, and which of them need no database-wide lock.

Every other statement is derived from its SQLite text at run time (:mod:`.translate`) and runs in a
write transaction that holds the database's one advisory write lock, as SQLite's single writer
would. The statements here are the fleet's traffic (episode starts and ends, memory adds, outcomes,
search hits, failure records, coordination-log appends and votes): each is keyed by the exact SQLite text the stores
send, and its PostgreSQL text below was written and reviewed for READ COMMITTED, where every
statement sees what was committed before it started:

* ``opens``: a write transaction whose first statement is one of these begins **without** the
  database-wide lock. Later statements of the same transaction that are also here stay lock-free;
  the first one that is not takes the lock before it runs (``lazy``), so an unusual path (an
  unknown skill name, a new fingerprint's learned diagnosis) is as safe as before.
* ``shared``: safe beside other hot statements, but not inside one of the dream's phases (they
  rewrite the same rows from values computed in Python): lock-free only in a transaction that holds
  the database-wide lock in shared mode (an episode end, ``dialect.share_write_lock``); elsewhere it
  takes the lock like a cold statement.
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


def _ids(name: str) -> str:
    """The integers of a JSON array parameter (SQLite's ``SELECT value FROM json_each(?)``)."""
    return f"SELECT e.value::bigint FROM json_array_elements_text((%({name})s)::json) AS e (value)"


# The episode's co-activation pairs from its skill (?1) and memory (?2) id arrays, as
# ``episodes._pairs_cte`` writes them for SQLite (weights 1.0 within a kind, 0.5 across; memory sorts
# before skill, so cross pairs lead with the memory), and the same rows in PostgreSQL's terms.
_SQLITE_PAIRS = (
    "s (id) AS (SELECT value FROM json_each(?1)), m (id) AS (SELECT value FROM json_each(?2)), "
    "p (a_kind, a_id, b_kind, b_id, w) AS {m}(SELECT 'skill', a.id, 'skill', b.id, 1.0 FROM s AS a JOIN s AS b "
    "ON a.id < b.id UNION ALL SELECT 'memory', a.id, 'memory', b.id, 1.0 FROM m AS a JOIN m AS b ON a.id < b.id "
    "UNION ALL SELECT 'memory', m.id, 'skill', s.id, 0.5 FROM m CROSS JOIN s)"
)
_PG_PAIRS = (
    f"s (id) AS ({_ids('p1')}), m (id) AS ({_ids('p2')}), "
    "p (a_kind, a_id, b_kind, b_id, w) AS {m}(SELECT 'skill', a.id, 'skill', b.id, 1.0 FROM s AS a JOIN s AS b "
    "ON a.id < b.id UNION ALL SELECT 'memory', a.id, 'memory', b.id, 1.0 FROM m AS a JOIN m AS b ON a.id < b.id "
    "UNION ALL SELECT 'memory', m.id, 'skill', s.id, 0.5 FROM m CROSS JOIN s)"
)
_PAIRS, _PAIRS_MATERIALIZED = _PG_PAIRS.format(m=""), _PG_PAIRS.format(m="MATERIALIZED ")
# The SQLite texts of the episode end's two learning statements (kaos_dream.episodes).
CO_KEY = (
    "\nINSERT INTO coactivations (a_kind, a_id, b_kind, b_id, count, first_at, last_at)\n"
    f"WITH {_SQLITE_PAIRS.format(m='')} SELECT a_kind, a_id, b_kind, b_id, w, ?3, ?3 FROM p WHERE true\n"
    "ON CONFLICT (a_kind, a_id, b_kind, b_id) DO UPDATE SET count = count + excluded.count, "
    "last_at = excluded.last_at\n"
)
LTP_KEY = (
    "\nUPDATE edges SET strength = min(1.0, strength + (?4 * (CASE WHEN p.w <= ?5 THEN 0.5 ELSE 1.0 END)) "
    "* (1.0 - strength)),\n       activations = activations + 1,\n"
    "       last_activated_cycle = coalesce((SELECT CAST(value AS INTEGER) FROM dream_state WHERE key = 'cycle'), "
    "0),\n       last_activated_at = ?3, updated_at = ?3\n"
    f"FROM (WITH {_SQLITE_PAIRS.format(m='MATERIALIZED ')} SELECT * FROM p) AS p\n"
    "WHERE edges.src_kind = p.a_kind AND edges.src_id = p.a_id AND edges.dst_kind = p.b_kind "
    "AND edges.dst_id = p.b_id\n  AND edges.relation = 'co_occurs_with' AND edges.pruned_at IS NULL\n"
)


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
    # Safe beside other hot statements but not beside the dream's bulk rewrites of the same rows (its
    # phases read co-activations and edge strengths and write values computed in Python): lock-free
    # only in a transaction that holds the database-wide lock in shared mode (an episode end); in any
    # other transaction it takes the lock like a cold statement.
    shared: bool = False
    # The full-text kind whose entry (the returned id) the commit must index, for an entry's insert.
    indexes: str | None = None


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
    # -- episode end (Episodes.end), in a transaction holding the database-wide lock in SHARED mode
    # (dialect.share_write_lock): ends run side by side, the dream's phases and cold writes (exclusive)
    # never overlap one. The end claims its episode with one UPDATE: a second end of the same episode
    # waits for the first one's row lock, then READ COMMITTED re-checks the WHERE on the committed
    # version (state no longer 'running'): no row, "already ended". An episode ends once.
    "UPDATE agents SET state = ?, ended_at = ?, conclusion = ?, citations = ?, processed_at = ?, "
    "tokens_in = coalesce(?, tokens_in), tokens_out = coalesce(?, tokens_out), tool_calls = coalesce(?, tool_calls), "
    "duration_s = coalesce(?, duration_s, CASE WHEN ? > started_at THEN ? - started_at ELSE 0 END) "
    "WHERE id = ? AND state = 'running' AND processed_at IS NULL RETURNING *": Hot(
        "UPDATE agents SET state = %(p1)s, ended_at = %(p2)s, conclusion = %(p3)s, citations = %(p4)s, "
        "processed_at = %(p5)s, tokens_in = coalesce(%(p6)s, tokens_in), tokens_out = coalesce(%(p7)s, tokens_out), "
        "tool_calls = coalesce(%(p8)s, tool_calls), duration_s = coalesce(%(p9)s, duration_s, "
        "CASE WHEN %(p10)s > started_at THEN %(p11)s - started_at ELSE 0 END) "
        "WHERE id = %(p12)s AND state = 'running' AND processed_at IS NULL RETURNING *",
        "UPDATE", "agents", opens=False, shared=True),
    # What the session touched: reads of rows its own (ended) episode wrote.
    "\nSELECT 0, skill_id FROM skill_uses WHERE agent_key = (SELECT a.id FROM agent_keys AS a WHERE a.agent_id = ?1) "
    "AND agent_indexed = 1 UNION ALL SELECT 0, skill_id FROM skill_uses WHERE id > coalesce((SELECT f.id FROM "
    "skill_uses AS f WHERE +f.agent_indexed = 1 ORDER BY f.id DESC LIMIT 1), 0) AND agent_key = (SELECT a.id FROM "
    "agent_keys AS a WHERE a.agent_id = ?1)\nUNION ALL SELECT 1, memory_id FROM memory_hits WHERE agent_id = ?1\n"
    "UNION ALL SELECT 2, fingerprint_id FROM failure_occurrences WHERE agent_id = ?1\n": Hot(
        "SELECT 0, skill_id FROM skill_uses WHERE agent_key = (SELECT a.id FROM agent_keys AS a "
        "WHERE a.agent_id = %(p1)s) AND agent_indexed = 1 "
        "UNION ALL SELECT 0, skill_id FROM skill_uses WHERE id > coalesce((SELECT f.id FROM skill_uses AS f "
        "WHERE +f.agent_indexed = 1 ORDER BY f.id DESC LIMIT 1), 0) "
        "AND agent_key = (SELECT a.id FROM agent_keys AS a WHERE a.agent_id = %(p1)s) "
        "UNION ALL SELECT 1, memory_id FROM memory_hits WHERE agent_id = %(p1)s "
        "UNION ALL SELECT 2, fingerprint_id FROM failure_occurrences WHERE agent_id = %(p1)s", "SELECT", opens=False),
    # The validation gate's reads of cited entries, and its report: a new row, then the episode's own
    # row (already locked by the claim above) points at it.
    "SELECT id, key, content FROM memories WHERE key = ?": Hot(
        "SELECT id, key, content FROM memories WHERE key = %(p1)s", "SELECT", opens=False),
    "SELECT key, content FROM memories WHERE id = ?": Hot(
        "SELECT key, content FROM memories WHERE id = %(p1)s", "SELECT", opens=False),
    "SELECT name, description, template FROM skills WHERE id = ?": Hot(
        "SELECT name, description, template FROM skills WHERE id = %(p1)s", "SELECT", opens=False),
    "INSERT INTO episode_gates (agent_id, passed, trust, novelty, reason, verdicts, created_at) "
    "VALUES (?, ?, ?, ?, ?, ?, ?)": Hot(
        "INSERT INTO episode_gates (agent_id, passed, trust, novelty, reason, verdicts, created_at) "
        "VALUES (%(p1)s, %(p2)s, %(p3)s, %(p4)s, %(p5)s, %(p6)s, %(p7)s)", "INSERT", "episode_gates", "id",
        opens=False, shared=True),
    "UPDATE agents SET gate_id = ? WHERE id = ? AND gate_id IS NULL": Hot(
        "UPDATE agents SET gate_id = %(p1)s WHERE id = %(p2)s AND gate_id IS NULL", "UPDATE", "agents",
        opens=False, shared=True),
    # Co-activation counts: one upsert, count = count + excluded.count on the newest committed row.
    # Rows are inserted in key order, so two ends with overlapping pairs lock them in one order
    # (no deadlock between ends).
    CO_KEY: Hot(
        "INSERT INTO coactivations (a_kind, a_id, b_kind, b_id, count, first_at, last_at) "
        f"WITH {_PAIRS} SELECT a_kind, a_id, b_kind, b_id, w, %(p3)s, %(p3)s FROM p "
        "ORDER BY a_kind, a_id, b_kind, b_id "
        "ON CONFLICT (a_kind, a_id, b_kind, b_id) DO UPDATE SET count = coactivations.count + excluded.count, "
        "last_at = excluded.last_at", "INSERT", "coactivations", opens=False, shared=True),
    # LTP of existing co_occurs_with edges: the edges are locked first in id order (FOR UPDATE, which
    # re-checks the row's newest version), then each strength is computed from the locked row, so
    # concurrent ends strengthen one after the other and none is lost.
    LTP_KEY: Hot(
        f"WITH {_PAIRS_MATERIALIZED}, t AS (SELECT e.id, p.w FROM edges AS e JOIN p ON e.src_kind = p.a_kind "
        "AND e.src_id = p.a_id AND e.dst_kind = p.b_kind AND e.dst_id = p.b_id "
        "WHERE e.relation = 'co_occurs_with' AND e.pruned_at IS NULL ORDER BY e.id FOR UPDATE OF e) "
        "UPDATE edges SET strength = LEAST(1.0, edges.strength + (%(p4)s * (CASE WHEN t.w <= %(p5)s THEN 0.5 "
        "ELSE 1.0 END)) * (1.0 - edges.strength)), activations = edges.activations + 1, "
        "last_activated_cycle = coalesce((SELECT CAST(value AS BIGINT) FROM dream_state WHERE key = 'cycle'), 0), "
        "last_activated_at = %(p3)s, updated_at = %(p3)s FROM t WHERE edges.id = t.id",
        "UPDATE", "edges", opens=False, shared=True),
    # The evidence hook's first read (which applied skills predict failures), and the automatic
    # dream's "is a pass due" count: reads (on PostgreSQL the automatic dream counts after the
    # commit, where the later of two concurrent ends sees both completions).
    "SELECT src_id FROM edges WHERE src_kind = 'skill' AND src_id IN (SELECT value FROM json_each(?)) "
    "AND relation IN (?,?) AND pruned_at IS NULL": Hot(
        f"SELECT src_id FROM edges WHERE src_kind = 'skill' AND src_id IN ({_ids('p1')}) "
        "AND relation IN (%(p2)s, %(p3)s) AND pruned_at IS NULL", "SELECT", opens=False),
    "WITH m (v) AS (SELECT coalesce((SELECT value FROM dream_state WHERE key = ?), NULL, 0.0)) SELECT (SELECT "
    "count(*) FROM agents WHERE state = 'completed' AND ended_at > m.v), m.v FROM m": Hot(
        "WITH m (v) AS (SELECT coalesce((SELECT value FROM dream_state WHERE key = %(p1)s), 0.0)) "
        "SELECT (SELECT count(*) FROM agents WHERE state = 'completed' AND ended_at > m.v), m.v FROM m",
        "SELECT", opens=False),
    # -- memory add (Memories.add: CLI `memory add`, MCP memory_add), in a transaction holding the
    # database-wide lock in SHARED mode (embedding.store add_entry). A new row: two adds of one key
    # meet on the unique index (the second waits for the first to commit, then fails: ConflictError);
    # its vector replaces only its own entry's rows. The commit indexes the entry (fulltext.index_entry,
    # hand-written): its own index rows, postings in term order, and the triggers' document-frequency
    # upserts and totals increments (df = df + 1, docs = docs + 1) apply to the newest committed rows.
    "INSERT INTO memories (kind, key, key_words, content, metadata, created_at, updated_at) "
    "VALUES (?, ?, ?, ?, ?, ?, ?)": Hot(
        "INSERT INTO memories (kind, key, key_words, content, metadata, created_at, updated_at) "
        "VALUES (%(p1)s, %(p2)s, %(p3)s, %(p4)s, %(p5)s, %(p6)s, %(p7)s)", "INSERT", "memories", "id",
        opens=False, shared=True, indexes="memory"),
    "DELETE FROM embeddings WHERE kind = ? AND entry_id = ? AND model = ?": Hot(
        "DELETE FROM embeddings WHERE kind = %(p1)s AND entry_id = %(p2)s AND model = %(p3)s", "DELETE",
        "embeddings", opens=False, shared=True),
    "INSERT INTO embeddings (kind, entry_id, model, model_version, dim, vector) VALUES (?, ?, ?, ?, ?, ?)": Hot(
        "INSERT INTO embeddings (kind, entry_id, model, model_version, dim, vector) "
        "VALUES (%(p1)s, %(p2)s, %(p3)s, %(p4)s, %(p5)s, %(p6)s)", "INSERT", "embeddings", opens=False, shared=True),
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
