-- PostgreSQL form of SQLite's 0013_outcome_task_index.sql: every reader of skill_uses_task asks for
-- one task (or task_hash IS NOT NULL), so the index holds only outcomes that have a task.
DROP INDEX skill_uses_task;
CREATE INDEX skill_uses_task ON skill_uses (task_hash, skill_id) WHERE task_hash IS NOT NULL;
