-- SQLite's migration 18 fills the per-agent index in batches of 256 rows to save a page per outcome.
-- On a server rows commit out of id order (each takes its id from the sequence before it commits),
-- so a fold could pass over a row still uncommitted and leave it outside the index for good. Here
-- every row enters the index as it is written: the column's default is 1 and nothing folds. The
-- readers' SQL is the same on both engines (store/agent_uses.py); their unfolded tail is empty here.

ALTER TABLE skill_uses ADD COLUMN agent_indexed BIGINT NOT NULL DEFAULT 1 CHECK (agent_indexed IN (0, 1));

DROP INDEX skill_uses_agent;

CREATE INDEX skill_uses_agent ON skill_uses (agent_key) WHERE agent_indexed = 1 AND agent_key IS NOT NULL;
