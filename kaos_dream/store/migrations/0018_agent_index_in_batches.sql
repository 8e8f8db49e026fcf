-- The per-agent index is filled in batches (issue 19: one record_outcome at >= 0.5x a raw INSERT +
-- UPDATE on the same file). Each outcome wrote one page more than that floor for every index and
-- counter table it touched; skill_uses_agent's page was one of four, and it is read only by the few
-- views of one agent's rows (an episode end's skills, `kaos agent show`, a validator's task texts).
--
-- * skill_uses.agent_indexed says whether a row is in skill_uses_agent (a partial index on it). New
--   rows arrive with 0, so writing one leaves the index alone.
-- * When a row whose id is a multiple of 256 is inserted, the trigger folds every row after the
--   newest folded one, up to the new row, into the index: one batch of pages for 256 outcomes.
-- * The folded rows are always a prefix by id: rows are appended (rowid is max + 1, also after
--   deletions, which only remove rows from the prefix or the tail), and a fold flags the range right
--   after the prefix. A reader of one agent's rows takes the folded ones from the index and the tail
--   after the newest folded row by a rowid range (at most ~256 rows): store/agent_uses.py.
-- * Here the rows up to the newest multiple of 256 are folded, the rest form the tail: the state the
--   trigger leaves in a file written by appends, so a file imported from an export (loaded at
--   schema 17, then migrated) holds the same rows as the file the export came from.
-- How rows are stored changes, not what they hold: an export is written in schema 17's layout.

ALTER TABLE skill_uses ADD COLUMN agent_indexed INTEGER NOT NULL DEFAULT 0 CHECK (agent_indexed IN (0, 1));

DROP INDEX skill_uses_agent;

UPDATE skill_uses SET agent_indexed = 1 WHERE id <= (SELECT coalesce(max(id), 0) / 256 * 256 FROM skill_uses);

CREATE INDEX skill_uses_agent ON skill_uses (agent_key) WHERE agent_indexed = 1 AND agent_key IS NOT NULL;

-- `+agent_indexed` keeps the planner off the partial index whatever its statistics say: the newest
-- folded row is found by a scan backwards from the newest row, which stops after the unfolded tail.
CREATE TRIGGER skill_uses_agent_fold AFTER INSERT ON skill_uses WHEN new.id % 256 = 0 BEGIN
    UPDATE skill_uses SET agent_indexed = 1
    WHERE id <= new.id
      AND id > coalesce((SELECT u.id FROM skill_uses AS u WHERE +u.agent_indexed = 1 ORDER BY u.id DESC LIMIT 1), 0);
END;
