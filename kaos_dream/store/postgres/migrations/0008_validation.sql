-- Validation-gated learning (PostgreSQL): per-episode validator results, the gate decision, and the
-- user preferences the alignment validator checks against.

CREATE TABLE validations (
    agent_id   TEXT NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    validator  TEXT NOT NULL,
    kind       TEXT NOT NULL CHECK (kind IN ('quality', 'report')),
    enabled    BIGINT NOT NULL CHECK (enabled IN (0, 1)),
    score      DOUBLE PRECISION CHECK (score IS NULL OR (score >= 0.0 AND score <= 1.0)),
    passed     BIGINT CHECK (passed IN (0, 1)),
    threshold  DOUBLE PRECISION,
    reason     TEXT NOT NULL,
    created_at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (agent_id, validator)
);

CREATE TABLE episode_gates (
    agent_id   TEXT PRIMARY KEY REFERENCES agents (id) ON DELETE CASCADE,
    passed     BIGINT NOT NULL CHECK (passed IN (0, 1)),
    trust      DOUBLE PRECISION,
    novelty    DOUBLE PRECISION,
    reason     TEXT NOT NULL,
    created_at DOUBLE PRECISION NOT NULL
);
CREATE INDEX episode_gates_passed ON episode_gates (passed, created_at);

CREATE TABLE preferences (
    key        TEXT PRIMARY KEY CHECK (length(trim(key)) > 0),
    value      TEXT NOT NULL,
    updated_at DOUBLE PRECISION NOT NULL
);
