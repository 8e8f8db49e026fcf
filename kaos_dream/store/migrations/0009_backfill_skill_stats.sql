-- Upgrade fix: the plasticity migration created the running counters (skill_stats, skill_task_stats)
-- and the triggers that keep them, but did not count the skill_uses rows a file already had, so a
-- library upgraded from an older schema ranked as if its skills had never been used. Recount both
-- tables from skill_uses. Only the triggers write these tables, so on a file whose counters are
-- already exact the recount changes nothing.

DELETE FROM skill_task_stats;

DELETE FROM skill_stats;

INSERT INTO skill_stats (skill_id, uses, successes, last_used_at)
SELECT skill_id, count(*), sum(success), max(created_at) FROM skill_uses GROUP BY skill_id;

INSERT INTO skill_task_stats (task_hash, skill_id, uses, successes, last_used_at)
SELECT task_hash, skill_id, count(*), sum(success), max(created_at)
FROM skill_uses WHERE task_hash IS NOT NULL GROUP BY task_hash, skill_id;
