-- The causal graph layer on top of the shared edge table (0002): prediction bookkeeping for online
-- learning, a log of sparsification prunes (so every pruned edge can be restored until purged), and
-- the recorded query log that sparsification uses as its retrieval-quality objective.

-- Online learning: when an edge's prediction was last checked, how often, and how often it was right.
ALTER TABLE edges ADD COLUMN last_verified_at REAL;
ALTER TABLE edges ADD COLUMN verifications INTEGER NOT NULL DEFAULT 0;
ALTER TABLE edges ADD COLUMN verified_correct INTEGER NOT NULL DEFAULT 0;

-- One row per edge pruned by a sparsification run. The snapshot keeps the edge's fields as JSON so
-- the record survives a purge; restored_at / purged_at close the row.
CREATE TABLE edge_prunes (
    id           INTEGER PRIMARY KEY,
    run          TEXT NOT NULL,
    edge_id      INTEGER NOT NULL,
    strategy     TEXT NOT NULL CHECK (strategy IN ('weight', 'coverage', 'random')),
    snapshot     TEXT NOT NULL,
    quality_before REAL,
    quality_after  REAL,
    pruned_at    REAL NOT NULL,
    restored_at  REAL,
    purged_at    REAL
);
CREATE INDEX edge_prunes_run ON edge_prunes (run);
CREATE INDEX edge_prunes_edge ON edge_prunes (edge_id, restored_at);

-- Queries whose retrieval quality sparsification must preserve: the seeds they activated from
-- (JSON list of [kind, id, weight]) and, when known, the node that was the right answer.
CREATE TABLE graph_queries (
    id          INTEGER PRIMARY KEY,
    query       TEXT NOT NULL,
    seeds       TEXT NOT NULL,
    target_kind TEXT CHECK (target_kind IN ('skill', 'memory', 'failure')),
    target_id   INTEGER,
    created_at  REAL NOT NULL,
    CHECK ((target_kind IS NULL) = (target_id IS NULL))
);
CREATE INDEX graph_queries_created ON graph_queries (created_at);
