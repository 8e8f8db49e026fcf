-- Agent Skills folders in and out (PostgreSQL; see the SQLite migration of the same name): the kept
-- front matter, line ending, source folder and digest of an imported skill, and its bundled files.

CREATE TABLE skill_packages (
    skill_id     BIGINT PRIMARY KEY REFERENCES skills (id) ON DELETE CASCADE,
    front_matter TEXT NOT NULL DEFAULT '{}' CHECK (kaos_json_valid(front_matter)),
    newline      TEXT NOT NULL DEFAULT 'lf' CHECK (newline IN ('lf', 'crlf')),
    source       TEXT,
    digest       TEXT NOT NULL,
    imported_at  DOUBLE PRECISION NOT NULL
);
CREATE INDEX skill_packages_source ON skill_packages (source);

CREATE TABLE skill_files (
    skill_id BIGINT NOT NULL REFERENCES skills (id) ON DELETE CASCADE,
    path     TEXT NOT NULL CHECK (length(path) > 0),
    size     BIGINT NOT NULL CHECK (size >= 0),
    sha256   TEXT NOT NULL CHECK (length(sha256) = 64),
    content  BYTEA NOT NULL CHECK (octet_length(content) = size),
    executable BIGINT NOT NULL DEFAULT 0 CHECK (executable IN (0, 1)),
    PRIMARY KEY (skill_id, path)
);
