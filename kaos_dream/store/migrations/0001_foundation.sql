-- Foundation: migration bookkeeping, skills, memories and their full-text indexes.

CREATE TABLE schema_migrations (
    version    INTEGER PRIMARY KEY,
    name       TEXT NOT NULL,
    applied_at REAL NOT NULL
);

CREATE TABLE skills (
    id                INTEGER PRIMARY KEY,
    name              TEXT NOT NULL UNIQUE CHECK (length(trim(name)) > 0),
    description       TEXT NOT NULL DEFAULT '',
    template          TEXT NOT NULL DEFAULT '',
    tags              TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(tags)),
    deprecated        INTEGER NOT NULL DEFAULT 0 CHECK (deprecated IN (0, 1)),
    deprecated_reason TEXT,
    deprecated_at     REAL,
    created_at        REAL NOT NULL,
    updated_at        REAL NOT NULL
);
CREATE INDEX skills_deprecated ON skills (deprecated, id);

CREATE VIRTUAL TABLE skills_fts USING fts5 (
    name, description, tags,
    content = 'skills', content_rowid = 'id',
    tokenize = 'porter unicode61'
);

CREATE TRIGGER skills_fts_insert AFTER INSERT ON skills BEGIN
    INSERT INTO skills_fts (rowid, name, description, tags)
    VALUES (new.id, new.name, new.description, new.tags);
END;

CREATE TRIGGER skills_fts_delete AFTER DELETE ON skills BEGIN
    INSERT INTO skills_fts (skills_fts, rowid, name, description, tags)
    VALUES ('delete', old.id, old.name, old.description, old.tags);
END;

CREATE TRIGGER skills_fts_update AFTER UPDATE OF name, description, tags ON skills BEGIN
    INSERT INTO skills_fts (skills_fts, rowid, name, description, tags)
    VALUES ('delete', old.id, old.name, old.description, old.tags);
    INSERT INTO skills_fts (rowid, name, description, tags)
    VALUES (new.id, new.name, new.description, new.tags);
END;

CREATE TABLE memories (
    id         INTEGER PRIMARY KEY,
    kind       TEXT NOT NULL DEFAULT 'note' CHECK (length(trim(kind)) > 0),
    key        TEXT NOT NULL UNIQUE CHECK (length(trim(key)) > 0),
    content    TEXT NOT NULL,
    metadata   TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(metadata)),
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL
);
CREATE INDEX memories_kind ON memories (kind, id);

CREATE VIRTUAL TABLE memories_fts USING fts5 (
    key, content, kind,
    content = 'memories', content_rowid = 'id',
    tokenize = 'porter unicode61'
);

CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts (rowid, key, content, kind) VALUES (new.id, new.key, new.content, new.kind);
END;

CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, key, content, kind)
    VALUES ('delete', old.id, old.key, old.content, old.kind);
END;

CREATE TRIGGER memories_fts_update AFTER UPDATE OF key, content, kind ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, key, content, kind)
    VALUES ('delete', old.id, old.key, old.content, old.kind);
    INSERT INTO memories_fts (rowid, key, content, kind) VALUES (new.id, new.key, new.content, new.kind);
END;
