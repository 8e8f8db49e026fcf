-- Dream consolidation: runs and their phases, the one-run-at-a-time lease, the dream's own counters
-- (cycle number, automatic-trigger marker) and review proposals.
-- (Reserved as 0005 on main; named 0003 on this branch so numbering stays contiguous.)

-- One row per dream pass. summary is the JSON the CLI shows; digest the markdown report.
CREATE TABLE dream_runs (
    id          INTEGER PRIMARY KEY,
    kind        TEXT NOT NULL DEFAULT 'run' CHECK (kind IN ('run', 'consolidate')),
    mode        TEXT NOT NULL CHECK (mode IN ('dry-run', 'apply')),
    trigger     TEXT NOT NULL DEFAULT 'manual' CHECK (trigger IN ('manual', 'auto', 'cron')),
    status      TEXT NOT NULL DEFAULT 'running'
                CHECK (status IN ('running', 'completed', 'failed', 'abandoned')),
    holder      TEXT NOT NULL,
    since       REAL,
    cycle       INTEGER,
    started_at  REAL NOT NULL,
    finished_at REAL,
    duration_ms REAL,
    summary     TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(summary)),
    digest      TEXT,
    error       TEXT
);
CREATE INDEX dream_runs_status ON dream_runs (status, id);

-- A phase's row is written in the same transaction as the phase's own changes, so a run killed at
-- any moment is resumed from the first phase without a row, and nothing is done twice.
CREATE TABLE dream_run_phases (
    run_id      INTEGER NOT NULL REFERENCES dream_runs (id) ON DELETE CASCADE,
    phase       TEXT NOT NULL,
    position    INTEGER NOT NULL,
    started_at  REAL NOT NULL,
    duration_ms REAL NOT NULL,
    summary     TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(summary)),
    digest      TEXT,
    PRIMARY KEY (run_id, phase)
);

-- At most one row: who is dreaming on this file, until when. An expired lease (or one whose holder
-- process is gone, on the same host) may be taken over.
CREATE TABLE dream_lease (
    name        TEXT PRIMARY KEY CHECK (name = 'dream'),
    holder      TEXT NOT NULL,
    run_id      INTEGER,
    acquired_at REAL NOT NULL,
    expires_at  REAL NOT NULL
);

-- Small named counters: 'cycle' (dream cycles applied, drives LTD), 'episodes_marker' (end time of
-- the last completed episode a dream pass has accounted for: the automatic trigger counts from it).
CREATE TABLE dream_state (
    key   TEXT PRIMARY KEY,
    value REAL NOT NULL
);
INSERT INTO dream_state (key, value) VALUES ('cycle', 0), ('episodes_marker', 0);

-- Review items keyed by (kind, targets). fingerprint hashes the targets' content when proposed, so a
-- rejected proposal comes back only when its targets changed.
CREATE TABLE proposals (
    id          INTEGER PRIMARY KEY,
    kind        TEXT NOT NULL CHECK (kind IN ('promote', 'prune', 'merge')),
    targets     TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    status      TEXT NOT NULL DEFAULT 'pending'
                CHECK (status IN ('pending', 'applied', 'rejected', 'superseded')),
    score       REAL,
    evidence    TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(evidence)),
    rationale   TEXT NOT NULL,
    run_id      INTEGER REFERENCES dream_runs (id) ON DELETE SET NULL,
    created_at  REAL NOT NULL,
    decided_at  REAL,
    reason      TEXT,
    result      TEXT CHECK (result IS NULL OR json_valid(result))
);
CREATE UNIQUE INDEX proposals_one_pending ON proposals (kind, targets) WHERE status = 'pending';
CREATE INDEX proposals_key ON proposals (kind, targets, status);
CREATE INDEX proposals_status ON proposals (status, kind, id);
