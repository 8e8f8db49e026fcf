-- Narrower outcome rows (issue 19: at most 100 bytes per outcome). Migration 14 keyed each task by
-- its 64-bit digest, so every outcome with a task context still carried 8 bytes of key in its row,
-- in the task index and in its counter row. Measured per outcome (10k skills, agents `sized-N`):
-- use row 35 bytes, counter row 25, task index 21, agent index 20, skill index 16.
--
-- * `tasks` gets a small surrogate key (`id`, numbered by first use: 1-3 bytes) and keeps the digest
--   as `hash` (the same signed 64-bit value, unique, so printf('%016x', hash) is the hex digest). A
--   task known only from a counter row whose use rows are gone gets a row too, with no text (its
--   next outcome keeps its own wording, as every reader takes the row's wording first).
-- * skill_uses.task_id and skill_task_stats.task_id refer to that key.
-- * skill_task_stats drops last_used_at: nothing ranks by it, and it always equals the newest
--   created_at of its (skill, task) rows (the triggers kept it so and `kaos db check` refused
--   anything else), which is how the export still writes it. Its triggers no longer recompute it.
-- * skill_uses_agent covers only rows with an agent: every reader asks for one agent's rows.
-- * skill_hits_agent goes: skill_hits_agent_skill (agent_id, skill_id, id) answers every query it
--   answered (EXPLAIN QUERY PLAN), so it was written on every search hit and never needed.
-- Rows, ids, wordings and counters move over unchanged.

CREATE TABLE tasks_v15 (
    id   INTEGER PRIMARY KEY,
    hash INTEGER NOT NULL UNIQUE,
    text TEXT
);

INSERT INTO tasks_v15 (hash, text)
SELECT k.hash, t.text
FROM (SELECT id AS hash FROM tasks
      UNION SELECT task_id FROM skill_uses WHERE task_id IS NOT NULL
      UNION SELECT task_id FROM skill_task_stats) AS k
LEFT JOIN tasks AS t ON t.id = k.hash
ORDER BY coalesce((SELECT min(u.id) FROM skill_uses AS u WHERE u.task_id = k.hash), 9223372036854775807), k.hash;

CREATE TABLE skill_uses_v15 (
    id         INTEGER PRIMARY KEY,
    skill_id   INTEGER NOT NULL REFERENCES skills (id) ON DELETE CASCADE,
    agent_id   TEXT REFERENCES agents (id) ON DELETE SET NULL,
    success    INTEGER NOT NULL CHECK (success IN (0, 1)),
    task_id    INTEGER REFERENCES tasks_v15 (id),
    -- The outcome's own wording, when it is not its task's text (NULL: the task's text, or no task).
    task       TEXT,
    created_at REAL NOT NULL
);

INSERT INTO skill_uses_v15 (id, skill_id, agent_id, success, task_id, task, created_at)
SELECT u.id, u.skill_id, u.agent_id, u.success, k.id, u.task, u.created_at
FROM skill_uses AS u LEFT JOIN tasks_v15 AS k ON k.hash = u.task_id
ORDER BY u.id;

CREATE TABLE skill_task_stats_v15 (
    skill_id  INTEGER NOT NULL REFERENCES skills (id) ON DELETE CASCADE,
    task_id   INTEGER NOT NULL,
    uses      INTEGER NOT NULL DEFAULT 0 CHECK (uses >= 0),
    successes INTEGER NOT NULL DEFAULT 0 CHECK (successes >= 0 AND successes <= uses),
    PRIMARY KEY (skill_id, task_id)
) WITHOUT ROWID;

INSERT INTO skill_task_stats_v15 (skill_id, task_id, uses, successes)
SELECT s.skill_id, k.id, s.uses, s.successes
FROM skill_task_stats AS s JOIN tasks_v15 AS k ON k.hash = s.task_id;

DROP TABLE skill_task_stats;

DROP TABLE skill_uses;

DROP TABLE tasks;

ALTER TABLE tasks_v15 RENAME TO tasks;

ALTER TABLE skill_uses_v15 RENAME TO skill_uses;

ALTER TABLE skill_task_stats_v15 RENAME TO skill_task_stats;

CREATE INDEX skill_uses_skill ON skill_uses (skill_id, created_at);

CREATE INDEX skill_uses_agent ON skill_uses (agent_id, skill_id) WHERE agent_id IS NOT NULL;

CREATE INDEX skill_uses_task ON skill_uses (task_id, skill_id) WHERE task_id IS NOT NULL;

DROP INDEX skill_hits_agent;

CREATE TRIGGER skill_uses_count_insert AFTER INSERT ON skill_uses BEGIN
    INSERT INTO skill_stats (skill_id, uses, successes, last_used_at)
    VALUES (new.skill_id, 1, new.success, new.created_at)
    ON CONFLICT (skill_id) DO UPDATE SET
        uses = uses + 1,
        successes = successes + excluded.successes,
        last_used_at = max(coalesce(last_used_at, excluded.last_used_at), excluded.last_used_at);
END;

CREATE TRIGGER skill_uses_task_count_insert AFTER INSERT ON skill_uses WHEN new.task_id IS NOT NULL BEGIN
    INSERT INTO skill_task_stats (skill_id, task_id, uses, successes)
    VALUES (new.skill_id, new.task_id, 1, new.success)
    ON CONFLICT (skill_id, task_id) DO UPDATE SET
        uses = uses + 1,
        successes = successes + excluded.successes;
END;

CREATE TRIGGER skill_uses_count_delete AFTER DELETE ON skill_uses BEGIN
    UPDATE skill_stats SET
        uses = uses - 1,
        successes = successes - old.success,
        last_used_at = (SELECT max(created_at) FROM skill_uses WHERE skill_id = old.skill_id)
    WHERE skill_id = old.skill_id;
    UPDATE skill_task_stats SET
        uses = uses - 1,
        successes = successes - old.success
    WHERE skill_id = old.skill_id AND task_id = old.task_id;
END;

-- A merge (or any fix-up) that moves telemetry between skills or tasks moves the counts with it.
CREATE TRIGGER skill_uses_count_update AFTER UPDATE OF skill_id, success, task_id, created_at ON skill_uses BEGIN
    UPDATE skill_stats SET
        uses = uses - 1,
        successes = successes - old.success,
        last_used_at = (SELECT max(created_at) FROM skill_uses WHERE skill_id = old.skill_id)
    WHERE skill_id = old.skill_id;
    UPDATE skill_task_stats SET
        uses = uses - 1,
        successes = successes - old.success
    WHERE skill_id = old.skill_id AND task_id = old.task_id;
    INSERT INTO skill_stats (skill_id, uses, successes, last_used_at)
    VALUES (new.skill_id, 1, new.success, new.created_at)
    ON CONFLICT (skill_id) DO UPDATE SET
        uses = uses + 1,
        successes = successes + excluded.successes,
        last_used_at = max(coalesce(last_used_at, excluded.last_used_at), excluded.last_used_at);
    INSERT INTO skill_task_stats (skill_id, task_id, uses, successes)
    SELECT new.skill_id, new.task_id, 1, new.success WHERE new.task_id IS NOT NULL
    ON CONFLICT (skill_id, task_id) DO UPDATE SET
        uses = uses + 1,
        successes = successes + excluded.successes;
END;
