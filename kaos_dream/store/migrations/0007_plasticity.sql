-- Plasticity: running counters so weighted ranking reads one row per candidate instead of
-- aggregating telemetry per query, an index for the task-context lookup, and episode citations.
--
-- The counters are maintained by triggers on skill_uses, so they stay exact whoever writes the
-- telemetry (record_outcome, merges moving rows, cascading deletes) and under concurrent writers
-- (each insert and its counter update share the writer's transaction).

-- Global outcome record of each skill.
CREATE TABLE skill_stats (
    skill_id     INTEGER PRIMARY KEY REFERENCES skills (id) ON DELETE CASCADE,
    uses         INTEGER NOT NULL DEFAULT 0 CHECK (uses >= 0),
    successes    INTEGER NOT NULL DEFAULT 0 CHECK (successes >= 0 AND successes <= uses),
    last_used_at REAL
);

-- Outcome record of each skill per task context (the normalised task text's hash).
CREATE TABLE skill_task_stats (
    task_hash    TEXT NOT NULL,
    skill_id     INTEGER NOT NULL REFERENCES skills (id) ON DELETE CASCADE,
    uses         INTEGER NOT NULL DEFAULT 0 CHECK (uses >= 0),
    successes    INTEGER NOT NULL DEFAULT 0 CHECK (successes >= 0 AND successes <= uses),
    last_used_at REAL,
    PRIMARY KEY (task_hash, skill_id)
) WITHOUT ROWID;
CREATE INDEX skill_task_stats_skill ON skill_task_stats (skill_id);

-- record_outcome without --task looks up the query of the agent's latest search that returned the skill.
CREATE INDEX skill_hits_agent_skill ON skill_hits (agent_id, skill_id, id);

-- What the agent said it relied on when it ended: a JSON list of [kind, name-or-key] pairs.
ALTER TABLE agents ADD COLUMN citations TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(citations));

CREATE TRIGGER skill_uses_count_insert AFTER INSERT ON skill_uses BEGIN
    INSERT INTO skill_stats (skill_id, uses, successes, last_used_at)
    VALUES (new.skill_id, 1, new.success, new.created_at)
    ON CONFLICT (skill_id) DO UPDATE SET
        uses = uses + 1,
        successes = successes + excluded.successes,
        last_used_at = max(coalesce(last_used_at, excluded.last_used_at), excluded.last_used_at);
    INSERT INTO skill_task_stats (task_hash, skill_id, uses, successes, last_used_at)
    SELECT new.task_hash, new.skill_id, 1, new.success, new.created_at WHERE new.task_hash IS NOT NULL
    ON CONFLICT (task_hash, skill_id) DO UPDATE SET
        uses = uses + 1,
        successes = successes + excluded.successes,
        last_used_at = max(coalesce(last_used_at, excluded.last_used_at), excluded.last_used_at);
END;

CREATE TRIGGER skill_uses_count_delete AFTER DELETE ON skill_uses BEGIN
    UPDATE skill_stats SET
        uses = uses - 1,
        successes = successes - old.success,
        last_used_at = (SELECT max(created_at) FROM skill_uses WHERE skill_id = old.skill_id)
    WHERE skill_id = old.skill_id;
    UPDATE skill_task_stats SET
        uses = uses - 1,
        successes = successes - old.success,
        last_used_at = (SELECT max(created_at) FROM skill_uses
                        WHERE skill_id = old.skill_id AND task_hash = old.task_hash)
    WHERE task_hash = old.task_hash AND skill_id = old.skill_id;
END;

-- A merge (or any fix-up) that moves telemetry between skills or tasks moves the counts with it.
CREATE TRIGGER skill_uses_count_update AFTER UPDATE OF skill_id, success, task_hash, created_at ON skill_uses BEGIN
    UPDATE skill_stats SET
        uses = uses - 1,
        successes = successes - old.success,
        last_used_at = (SELECT max(created_at) FROM skill_uses WHERE skill_id = old.skill_id)
    WHERE skill_id = old.skill_id;
    UPDATE skill_task_stats SET
        uses = uses - 1,
        successes = successes - old.success,
        last_used_at = (SELECT max(created_at) FROM skill_uses
                        WHERE skill_id = old.skill_id AND task_hash = old.task_hash)
    WHERE task_hash = old.task_hash AND skill_id = old.skill_id;
    INSERT INTO skill_stats (skill_id, uses, successes, last_used_at)
    VALUES (new.skill_id, 1, new.success, new.created_at)
    ON CONFLICT (skill_id) DO UPDATE SET
        uses = uses + 1,
        successes = successes + excluded.successes,
        last_used_at = max(coalesce(last_used_at, excluded.last_used_at), excluded.last_used_at);
    INSERT INTO skill_task_stats (task_hash, skill_id, uses, successes, last_used_at)
    SELECT new.task_hash, new.skill_id, 1, new.success, new.created_at WHERE new.task_hash IS NOT NULL
    ON CONFLICT (task_hash, skill_id) DO UPDATE SET
        uses = uses + 1,
        successes = successes + excluded.successes,
        last_used_at = max(coalesce(last_used_at, excluded.last_used_at), excluded.last_used_at);
END;
