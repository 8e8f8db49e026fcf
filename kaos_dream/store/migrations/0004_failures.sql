-- Failure intelligence: fingerprints (graph nodes of kind 'failure'), occurrences, diagnoses,
-- fixes with their outcome history, systemic alerts, and the LLM answer cache.
--
-- A fingerprint's integer id is its node id in `edges` (kind 'failure'); `hash` is the stable,
-- versioned identity computed from (algorithm, tool, exception type, normalised message).

CREATE TABLE failure_fingerprints (
    id                INTEGER PRIMARY KEY,
    hash              TEXT NOT NULL UNIQUE,
    algorithm         INTEGER NOT NULL,
    tool              TEXT NOT NULL CHECK (length(trim(tool)) > 0),
    exception_type    TEXT,
    normalized        TEXT NOT NULL,
    key_text          TEXT NOT NULL,
    example           TEXT NOT NULL,
    occurrences       INTEGER NOT NULL DEFAULT 0,
    first_seen        REAL NOT NULL,
    last_seen         REAL NOT NULL,
    category          TEXT NOT NULL DEFAULT 'unknown'
                      CHECK (category IN ('transient', 'config', 'code', 'infra', 'unknown')),
    root_cause        TEXT,
    suggested_action  TEXT,
    confidence        REAL NOT NULL DEFAULT 0 CHECK (confidence >= 0 AND confidence <= 1),
    diagnostic_method TEXT NOT NULL DEFAULT 'none'
                      CHECK (diagnostic_method IN ('none', 'heuristic', 'llm', 'llm-cached', 'manual', 'fallback')),
    diagnoser         TEXT,
    diagnosed_at      REAL
);
CREATE INDEX failure_fingerprints_category ON failure_fingerprints (category, occurrences);
CREATE INDEX failure_fingerprints_tool ON failure_fingerprints (tool);

-- Every diagnosis a fingerprint ever had (first sight, recategorisation, manual override).
CREATE TABLE failure_diagnoses (
    id                INTEGER PRIMARY KEY,
    fingerprint_id    INTEGER NOT NULL REFERENCES failure_fingerprints (id) ON DELETE CASCADE,
    category          TEXT NOT NULL CHECK (category IN ('transient', 'config', 'code', 'infra', 'unknown')),
    root_cause        TEXT,
    suggested_action  TEXT,
    confidence        REAL NOT NULL,
    method            TEXT NOT NULL,
    diagnoser         TEXT,
    decided_by        TEXT,
    created_at        REAL NOT NULL
);
CREATE INDEX failure_diagnoses_fp ON failure_diagnoses (fingerprint_id, id);

-- One row per reported failure. The stored message is a bounded sample; the hash and length
-- describe the full message.
CREATE TABLE failure_occurrences (
    id             INTEGER PRIMARY KEY,
    fingerprint_id INTEGER NOT NULL REFERENCES failure_fingerprints (id) ON DELETE CASCADE,
    agent_id       TEXT REFERENCES agents (id) ON DELETE SET NULL,
    message_sample TEXT NOT NULL,
    message_hash   TEXT NOT NULL,
    message_chars  INTEGER NOT NULL,
    created_at     REAL NOT NULL
);
CREATE INDEX failure_occurrences_fp ON failure_occurrences (fingerprint_id, created_at);
CREATE INDEX failure_occurrences_agent ON failure_occurrences (agent_id);

-- Fixes attached to a fingerprint. At most one is active; withdrawn and replaced ones are history.
CREATE TABLE failure_fixes (
    id             INTEGER PRIMARY KEY,
    fingerprint_id INTEGER NOT NULL REFERENCES failure_fingerprints (id) ON DELETE CASCADE,
    summary        TEXT,
    skill_id       INTEGER REFERENCES skills (id) ON DELETE SET NULL,
    status         TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'withdrawn', 'replaced')),
    attempts       INTEGER NOT NULL DEFAULT 0,
    successes      INTEGER NOT NULL DEFAULT 0,
    attached_by    TEXT,
    attached_at    REAL NOT NULL,
    ended_at       REAL,
    end_reason     TEXT,
    CHECK (summary IS NOT NULL OR skill_id IS NOT NULL)
);
CREATE UNIQUE INDEX failure_fixes_one_active ON failure_fixes (fingerprint_id) WHERE status = 'active';

CREATE TABLE failure_fix_outcomes (
    id         INTEGER PRIMARY KEY,
    fix_id     INTEGER NOT NULL REFERENCES failure_fixes (id) ON DELETE CASCADE,
    succeeded  INTEGER NOT NULL CHECK (succeeded IN (0, 1)),
    agent_id   TEXT REFERENCES agents (id) ON DELETE SET NULL,
    created_at REAL NOT NULL
);
CREATE INDEX failure_fix_outcomes_fix ON failure_fix_outcomes (fix_id, id);

-- Systemic alerts: many distinct agents hit one fingerprint within a sliding window.
CREATE TABLE systemic_alerts (
    id             INTEGER PRIMARY KEY,
    fingerprint_id INTEGER NOT NULL REFERENCES failure_fingerprints (id) ON DELETE CASCADE,
    status         TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'acked', 'resolved')),
    agent_count    INTEGER NOT NULL,
    threshold      INTEGER NOT NULL,
    window_s       REAL NOT NULL,
    raised_at      REAL NOT NULL,
    last_seen_at   REAL NOT NULL,
    acked_at       REAL,
    acked_by       TEXT,
    resolved_at    REAL,
    resolved_by    TEXT
);
CREATE INDEX systemic_alerts_fp ON systemic_alerts (fingerprint_id, raised_at);
CREATE INDEX systemic_alerts_status ON systemic_alerts (status);

-- Validated LLM answers, keyed by (purpose, model, caller key): each question is paid for once.
CREATE TABLE llm_cache (
    key        TEXT PRIMARY KEY,
    purpose    TEXT NOT NULL,
    model      TEXT NOT NULL,
    answer     TEXT NOT NULL,
    created_at REAL NOT NULL
);

CREATE TRIGGER failure_fingerprints_graph_delete AFTER DELETE ON failure_fingerprints BEGIN
    DELETE FROM edges
    WHERE (src_kind = 'failure' AND src_id = old.id) OR (dst_kind = 'failure' AND dst_id = old.id);
    DELETE FROM coactivations
    WHERE (a_kind = 'failure' AND a_id = old.id) OR (b_kind = 'failure' AND b_id = old.id);
END;
