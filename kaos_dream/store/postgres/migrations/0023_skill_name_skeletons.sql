-- Look-alike skill names (see the SQLite migration of the same name): each skill keeps the TR39
-- confusable skeleton of its name, filled in by Python on the first write of a skill name (NULL until
-- then); the index serves both the look-alike lookup and that fill's `IS NULL` search. Not unique: a
-- library may already hold look-alike pairs, which `kaos db check` reports.

ALTER TABLE skills ADD COLUMN name_skeleton TEXT;

CREATE INDEX skills_name_skeleton ON skills (name_skeleton);
