-- Upgrade fix (PostgreSQL): recount the running counters from skill_uses (see the SQLite 0009). On a
-- database whose counters are already exact the recount changes nothing.

DELETE FROM skill_task_stats;

DELETE FROM skill_stats;

INSERT INTO skill_stats (skill_id, uses, successes, last_used_at)
SELECT skill_id, count(*), sum(success), max(created_at) FROM skill_uses GROUP BY skill_id;

INSERT INTO skill_task_stats (task_hash, skill_id, uses, successes, last_used_at)
SELECT task_hash, skill_id, count(*), sum(success), max(created_at)
FROM skill_uses WHERE task_hash IS NOT NULL GROUP BY task_hash, skill_id;
