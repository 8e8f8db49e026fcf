-- Identifier-aware full-text index (issue 31 item 3). A name such as craftCraftingTable is one token
-- to FTS5's unicode61 tokenizer, so "crafting table" never found it. Each skill name and memory key
-- now has beside it the words splitting it as an identifier adds (tokens.identifier_index_words:
-- "craft crafting table"; empty for git_status, k8s.rollout.restart or src/utils/io.py, which the
-- tokenizer already cuts at _ . / -). The index reads the name followed by those words from a view,
-- so the exact name still matches as one token and the words match too; external-content deletes,
-- 'rebuild' and 'integrity-check' all see the same text. Writers fill the column with the name
-- (kaos_identifier_index_words is registered by the migration runner for this step only; the schema
-- itself calls no Python, so any SQLite client can still write the file).

ALTER TABLE skills ADD COLUMN name_words TEXT NOT NULL DEFAULT '';
ALTER TABLE memories ADD COLUMN key_words TEXT NOT NULL DEFAULT '';

DROP TRIGGER skills_fts_insert;
DROP TRIGGER skills_fts_delete;
DROP TRIGGER skills_fts_update;
DROP TABLE skills_fts;
DROP TRIGGER memories_fts_insert;
DROP TRIGGER memories_fts_delete;
DROP TRIGGER memories_fts_update;
DROP TABLE memories_fts;

UPDATE skills SET name_words = kaos_identifier_index_words(name);
UPDATE memories SET key_words = kaos_identifier_index_words(key);

CREATE VIEW skills_fts_source AS
SELECT id, name || ' ' || name_words AS name, description, tags FROM skills;

CREATE VIRTUAL TABLE skills_fts USING fts5 (
    name, description, tags,
    content = 'skills_fts_source', content_rowid = 'id',
    tokenize = 'porter unicode61'
);
INSERT INTO skills_fts (skills_fts) VALUES ('rebuild');

CREATE TRIGGER skills_fts_insert AFTER INSERT ON skills BEGIN
    INSERT INTO skills_fts (rowid, name, description, tags)
    VALUES (new.id, new.name || ' ' || new.name_words, new.description, new.tags);
END;

CREATE TRIGGER skills_fts_delete AFTER DELETE ON skills BEGIN
    INSERT INTO skills_fts (skills_fts, rowid, name, description, tags)
    VALUES ('delete', old.id, old.name || ' ' || old.name_words, old.description, old.tags);
END;

CREATE TRIGGER skills_fts_update AFTER UPDATE OF name, name_words, description, tags ON skills BEGIN
    INSERT INTO skills_fts (skills_fts, rowid, name, description, tags)
    VALUES ('delete', old.id, old.name || ' ' || old.name_words, old.description, old.tags);
    INSERT INTO skills_fts (rowid, name, description, tags)
    VALUES (new.id, new.name || ' ' || new.name_words, new.description, new.tags);
END;

CREATE VIEW memories_fts_source AS
SELECT id, key || ' ' || key_words AS key, content, kind FROM memories;

CREATE VIRTUAL TABLE memories_fts USING fts5 (
    key, content, kind,
    content = 'memories_fts_source', content_rowid = 'id',
    tokenize = 'porter unicode61'
);
INSERT INTO memories_fts (memories_fts) VALUES ('rebuild');

CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts (rowid, key, content, kind)
    VALUES (new.id, new.key || ' ' || new.key_words, new.content, new.kind);
END;

CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, key, content, kind)
    VALUES ('delete', old.id, old.key || ' ' || old.key_words, old.content, old.kind);
END;

CREATE TRIGGER memories_fts_update AFTER UPDATE OF key, key_words, content, kind ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, key, content, kind)
    VALUES ('delete', old.id, old.key || ' ' || old.key_words, old.content, old.kind);
    INSERT INTO memories_fts (rowid, key, content, kind)
    VALUES (new.id, new.key || ' ' || new.key_words, new.content, new.kind);
END;
