-- Stored, versioned text embeddings for semantic retrieval (issue 22). One row per skill or memory:
-- the model and version that made it, its dimension and the vector as little-endian float32 bytes
-- (portable: plain bytes any engine stores, read back with numpy). `seq` is AUTOINCREMENT, so it is
-- never reused: every new or replaced vector gets a larger one, and a search process knows its
-- cached vectors are current by reading max(seq) alone.
CREATE TABLE embeddings (
    seq           INTEGER PRIMARY KEY AUTOINCREMENT,
    kind          TEXT NOT NULL CHECK (kind IN ('skill', 'memory')),
    entry_id      INTEGER NOT NULL,
    model         TEXT NOT NULL,
    model_version TEXT NOT NULL,
    dim           INTEGER NOT NULL CHECK (dim > 0),
    vector        BLOB NOT NULL CHECK (length(vector) = 4 * dim),
    UNIQUE (kind, entry_id)
);

-- A vector goes with its row; an edit of what was embedded makes it stale, so it goes too (the
-- writer embeds the new text in the same transaction, or the dream backfills it).
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
