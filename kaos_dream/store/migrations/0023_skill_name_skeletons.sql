-- Look-alike skill names (issue 33 item 4): every skill keeps the Unicode TR39 confusable skeleton of
-- its name (NFD, each character mapped to its prototype by Unicode's confusables data, NFD again), so
-- `skill add`, a rename and the importers find an existing name that looks the same (a Cyrillic е, a
-- U+2010 hyphen) with one index lookup, not by skeletonising every name of a large library.
--
-- The skeleton is computed in Python (the confusables data is not SQL), so this migration only adds the
-- column: rows from before it hold NULL, and the first write of a skill name fills them in (one pass,
-- in the writer's transaction); the index also serves that pass's `name_skeleton IS NULL` search. Not
-- unique: a library may already hold look-alike pairs, which `kaos db check` reports.
-- Depends only on the skills table of 0001, so it applies on top of 0021 or 0022 alike.

ALTER TABLE skills ADD COLUMN name_skeleton TEXT;

CREATE INDEX skills_name_skeleton ON skills (name_skeleton);
