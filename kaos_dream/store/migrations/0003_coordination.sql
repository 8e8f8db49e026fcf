-- Coordination log (intents, votes, decisions, commits, aborts, results) and the policies mined
-- from it. The log is append-only: triggers refuse UPDATE and DELETE.

CREATE TABLE coordination_log (
    position   INTEGER PRIMARY KEY,
    kind       TEXT NOT NULL CHECK (kind IN ('intent', 'vote', 'decision', 'commit', 'abort', 'result')),
    agent      TEXT NOT NULL CHECK (length(trim(agent)) > 0),
    -- For every entry but an intent: the intent it is about.
    intent     INTEGER REFERENCES coordination_log (position),
    -- Intents: the action as written and its normalised key (what policies match on).
    action     TEXT,
    action_key TEXT,
    -- Votes: 1 approve, 0 reject. Decisions: 1 approved, 0 rejected.
    approve    INTEGER CHECK (approve IN (0, 1)),
    reason     TEXT,
    meta       TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(meta)),
    -- Set on votes and decisions a policy made (they never count towards mining).
    policy_id  INTEGER,
    created_at REAL NOT NULL,
    CHECK ((kind = 'intent') = (intent IS NULL)),
    CHECK ((kind = 'intent') = (action_key IS NOT NULL)),
    CHECK (kind NOT IN ('vote', 'decision') OR approve IS NOT NULL)
);
CREATE INDEX coordination_log_intent ON coordination_log (intent, kind);
CREATE INDEX coordination_log_action ON coordination_log (action_key) WHERE kind = 'intent';

CREATE TRIGGER coordination_log_no_update BEFORE UPDATE ON coordination_log BEGIN
    SELECT RAISE(ABORT, 'the coordination log is append-only');
END;

CREATE TRIGGER coordination_log_no_delete BEFORE DELETE ON coordination_log BEGIN
    SELECT RAISE(ABORT, 'the coordination log is append-only');
END;

-- status: proposed (mined, waiting for --apply or a human), enabled, disabled (by a human; never
-- re-enabled automatically), demoted (approval fell below the threshold).
CREATE TABLE policies (
    id              INTEGER PRIMARY KEY,
    action_key      TEXT NOT NULL UNIQUE,
    status          TEXT NOT NULL CHECK (status IN ('proposed', 'enabled', 'disabled', 'demoted')),
    approval_rate   REAL NOT NULL,
    support         INTEGER NOT NULL,
    applied_count   INTEGER NOT NULL DEFAULT 0,
    last_applied_at REAL,
    status_by       TEXT NOT NULL,
    status_reason   TEXT,
    created_at      REAL NOT NULL,
    updated_at      REAL NOT NULL
);
