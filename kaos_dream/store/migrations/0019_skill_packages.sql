-- Agent Skills folders in and out (issue 32). A skill imported from a folder holding SKILL.md keeps
-- what the skills table has no column for, in rows of its own so a hand-added skill is unchanged:
--
-- * skill_packages: the front-matter fields kaos keeps (license, compatibility, metadata,
--   allowed-tools) as a JSON object, the line ending the file used, the folder it came from (what a
--   `--sync` of a tree owns) and a digest of the folder's bytes (SKILL.md and every bundled file),
--   so a sync of an untouched folder compares one hash and parses nothing.
-- * skill_files: every bundled file (scripts/, references/, assets/, ...) by its path relative to
--   the skill's folder, with size, sha256, the bytes themselves and whether it is executable (a
--   script a harness runs), so an export writes them back byte for byte without the original folder.
--
-- Both go with their skill (ON DELETE CASCADE); the skill's id, and so its telemetry, stays when a
-- sync replaces the text.

CREATE TABLE skill_packages (
    skill_id     INTEGER PRIMARY KEY REFERENCES skills (id) ON DELETE CASCADE,
    front_matter TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(front_matter)),
    newline      TEXT NOT NULL DEFAULT 'lf' CHECK (newline IN ('lf', 'crlf')),
    source       TEXT,
    digest       TEXT NOT NULL,
    imported_at  REAL NOT NULL
);
CREATE INDEX skill_packages_source ON skill_packages (source);

CREATE TABLE skill_files (
    skill_id INTEGER NOT NULL REFERENCES skills (id) ON DELETE CASCADE,
    path     TEXT NOT NULL CHECK (length(path) > 0),
    size     INTEGER NOT NULL CHECK (size >= 0),
    sha256   TEXT NOT NULL CHECK (length(sha256) = 64),
    content  BLOB NOT NULL CHECK (length(content) = size),
    executable INTEGER NOT NULL DEFAULT 0 CHECK (executable IN (0, 1)),
    PRIMARY KEY (skill_id, path)
);
