-- Telemetry fast path (issue 19): an outcome without a task context (task_hash NULL) no longer
-- writes an entry into the task index. Every reader of skill_uses_task asks for one task
-- (`task_hash = ?`, or the recount's `task_hash IS NOT NULL`), which the partial index answers as
-- the full one did (EXPLAIN QUERY PLAN unchanged), so the NULL entries were written and never read:
-- one b-tree page less to dirty and write per such outcome, and a smaller index.
DROP INDEX skill_uses_task;
CREATE INDEX skill_uses_task ON skill_uses (task_hash, skill_id) WHERE task_hash IS NOT NULL;
