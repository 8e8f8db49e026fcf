-- Two tiers of vectors (issue 22): a skill or memory may hold one vector per model, the fast model's
-- written with the row and a stronger model's backfilled later by the dream or `kaos db reindex`.
-- The uniqueness becomes (kind, entry_id, model); SQLite cannot change a table's UNIQUE in place, so
-- the table is rebuilt with its rows, seq values and AUTOINCREMENT counter (seq is never reused, which
-- the search processes' cache check relies on). The triggers read the table by name, so they are
-- dropped first and made again unchanged: an edit or delete still drops every vector of its row.

DROP TRIGGER embeddings_skill_delete;
DROP TRIGGER embeddings_memory_delete;
DROP TRIGGER embeddings_skill_edit;
DROP TRIGGER embeddings_memory_edit;

CREATE TABLE embeddings_per_model (
    seq           INTEGER PRIMARY KEY AUTOINCREMENT,
    kind          TEXT NOT NULL CHECK (kind IN ('skill', 'memory')),
    entry_id      INTEGER NOT NULL,
    model         TEXT NOT NULL,
    model_version TEXT NOT NULL,
    dim           INTEGER NOT NULL CHECK (dim > 0),
    vector        BLOB NOT NULL CHECK (length(vector) = 4 * dim),
    UNIQUE (kind, entry_id, model)
);

INSERT INTO embeddings_per_model (seq, kind, entry_id, model, model_version, dim, vector)
    SELECT seq, kind, entry_id, model, model_version, dim, vector FROM embeddings ORDER BY seq;

DELETE FROM sqlite_sequence WHERE name = 'embeddings_per_model';

INSERT INTO sqlite_sequence (name, seq) SELECT 'embeddings_per_model', seq FROM sqlite_sequence WHERE name = 'embeddings';

DROP TABLE embeddings;

ALTER TABLE embeddings_per_model RENAME TO embeddings;

CREATE TRIGGER embeddings_skill_delete AFTER DELETE ON skills BEGIN
    DELETE FROM embeddings WHERE kind = 'skill' AND entry_id = old.id;
END;

CREATE TRIGGER embeddings_memory_delete AFTER DELETE ON memories BEGIN
    DELETE FROM embeddings WHERE kind = 'memory' AND entry_id = old.id;
END;

CREATE TRIGGER embeddings_skill_edit AFTER UPDATE OF name, description, tags ON skills BEGIN
    DELETE FROM embeddings WHERE kind = 'skill' AND entry_id = new.id;
END;

CREATE TRIGGER embeddings_memory_edit AFTER UPDATE OF content ON memories BEGIN
    DELETE FROM embeddings WHERE kind = 'memory' AND entry_id = new.id;
END;
