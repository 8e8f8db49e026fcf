-- Shared schema for plasticity, failures and the graph: agent sessions (episodes), fast-path
-- telemetry, the typed edge table and co-activation counts.
--
-- Graph nodes are (kind, id) pairs with kind in skill / memory / failure and an integer id, so one
-- edge table serves every relation. Nodes are polymorphic, so edges cannot use foreign keys:
-- triggers below delete a skill's or memory's edges and co-activations when it is deleted.

CREATE TABLE agents (
    id          TEXT PRIMARY KEY CHECK (length(trim(id)) > 0),
    name        TEXT,
    state       TEXT NOT NULL DEFAULT 'running'
                CHECK (state IN ('running', 'completed', 'failed', 'killed')),
    started_at  REAL NOT NULL,
    ended_at    REAL,
    conclusion  TEXT,
    -- Set once the episode-end batch has run, so completing the same agent twice does nothing.
    processed_at REAL
);
CREATE INDEX agents_state ON agents (state, ended_at);

-- One row per reported outcome of applying a skill (the record-outcome fast path).
CREATE TABLE skill_uses (
    id         INTEGER PRIMARY KEY,
    skill_id   INTEGER NOT NULL REFERENCES skills (id) ON DELETE CASCADE,
    agent_id   TEXT REFERENCES agents (id) ON DELETE SET NULL,
    success    INTEGER NOT NULL CHECK (success IN (0, 1)),
    task       TEXT,
    task_hash  TEXT,
    created_at REAL NOT NULL
);
CREATE INDEX skill_uses_skill ON skill_uses (skill_id, created_at);
CREATE INDEX skill_uses_agent ON skill_uses (agent_id);
CREATE INDEX skill_uses_task ON skill_uses (task_hash, skill_id);

-- One row per skill a search returned with record_hits on, with its rank (1 = first).
CREATE TABLE skill_hits (
    id         INTEGER PRIMARY KEY,
    skill_id   INTEGER NOT NULL REFERENCES skills (id) ON DELETE CASCADE,
    agent_id   TEXT REFERENCES agents (id) ON DELETE SET NULL,
    query      TEXT NOT NULL,
    rank       INTEGER NOT NULL CHECK (rank >= 1),
    created_at REAL NOT NULL
);
CREATE INDEX skill_hits_skill ON skill_hits (skill_id);
CREATE INDEX skill_hits_agent ON skill_hits (agent_id);

-- One row per memory a search returned with record_hits on, with its rank.
CREATE TABLE memory_hits (
    id         INTEGER PRIMARY KEY,
    memory_id  INTEGER NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    agent_id   TEXT REFERENCES agents (id) ON DELETE SET NULL,
    query      TEXT NOT NULL,
    rank       INTEGER NOT NULL CHECK (rank >= 1),
    created_at REAL NOT NULL
);
CREATE INDEX memory_hits_memory ON memory_hits (memory_id);
CREATE INDEX memory_hits_agent ON memory_hits (agent_id);

-- Typed, directed edges. co_occurs_with is undirected and stored once with (src) < (dst) in
-- (kind, id) order. pruned_at marks an edge removed by sparsification (reversible until purged).
CREATE TABLE edges (
    id                   INTEGER PRIMARY KEY,
    src_kind             TEXT NOT NULL CHECK (src_kind IN ('skill', 'memory', 'failure')),
    src_id               INTEGER NOT NULL,
    dst_kind             TEXT NOT NULL CHECK (dst_kind IN ('skill', 'memory', 'failure')),
    dst_id               INTEGER NOT NULL,
    relation             TEXT NOT NULL
                         CHECK (relation IN ('co_occurs_with', 'caused', 'enabled', 'prevented', 'fact', 'meta')),
    strength             REAL NOT NULL CHECK (strength >= 0.0 AND strength <= 1.0),
    activations          INTEGER NOT NULL DEFAULT 0,
    last_activated_cycle INTEGER NOT NULL DEFAULT 0,
    last_activated_at    REAL,
    provenance           TEXT NOT NULL CHECK (provenance IN ('observed', 'declared', 'emergent')),
    created_at           REAL NOT NULL,
    updated_at           REAL NOT NULL,
    pruned_at            REAL,
    UNIQUE (src_kind, src_id, dst_kind, dst_id, relation),
    CHECK (NOT (src_kind = dst_kind AND src_id = dst_id))
);
CREATE INDEX edges_dst ON edges (dst_kind, dst_id, relation);
CREATE INDEX edges_relation ON edges (relation, strength);

-- How often two nodes were used together in gated episodes; (a) < (b) in (kind, id) order.
-- Cross-modal pairs (skill x memory) count half, hence REAL.
CREATE TABLE coactivations (
    a_kind     TEXT NOT NULL,
    a_id       INTEGER NOT NULL,
    b_kind     TEXT NOT NULL,
    b_id       INTEGER NOT NULL,
    count      REAL NOT NULL DEFAULT 0,
    first_at   REAL NOT NULL,
    last_at    REAL NOT NULL,
    PRIMARY KEY (a_kind, a_id, b_kind, b_id)
) WITHOUT ROWID;

CREATE TRIGGER skills_graph_delete AFTER DELETE ON skills BEGIN
    DELETE FROM edges WHERE (src_kind = 'skill' AND src_id = old.id) OR (dst_kind = 'skill' AND dst_id = old.id);
    DELETE FROM coactivations
    WHERE (a_kind = 'skill' AND a_id = old.id) OR (b_kind = 'skill' AND b_id = old.id);
END;

CREATE TRIGGER memories_graph_delete AFTER DELETE ON memories BEGIN
    DELETE FROM edges
    WHERE (src_kind = 'memory' AND src_id = old.id) OR (dst_kind = 'memory' AND dst_id = old.id);
    DELETE FROM coactivations
    WHERE (a_kind = 'memory' AND a_id = old.id) OR (b_kind = 'memory' AND b_id = old.id);
END;
