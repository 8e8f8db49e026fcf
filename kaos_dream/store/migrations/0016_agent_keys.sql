-- Outcome rows name their agent by a small integer (issue 19: at most 100 bytes per outcome at 100k
-- skills too). Every outcome stored its agent's id text twice: in its row and in skill_uses_agent
-- (measured at 100k skills: ~108 bytes per outcome, the agent text ~16 of them).
--
-- * `agent_keys` gives each agent a small key, numbered in the order agents started (ties by id).
--   A trigger on `agents` gives every new agent its key inside the transaction that registers it,
--   so every path that registers one (start, record_outcome, search hits, failures, imports) is
--   covered, and many processes registering the same new agent get one key: the insert-or-ignore
--   that registers it is serialised by the write lock, and only the insert that adds the row fires.
-- * skill_uses.agent_key refers to it; skill_uses_agent indexes the key alone (every reader asks for
--   one agent's rows: the episode end's skills, `kaos agent show`, a validator's task texts; only the
--   first read the skill from the index, and a session's few rows are as quickly read from the table;
--   the prune rule's per-agent grouping reads one skill's rows through skill_uses_skill).
-- Agents are never deleted; if one were, its key would go with it and its outcomes keep no agent, as
-- skill_uses.agent_id's ON DELETE SET NULL did. Rows, ids and counters move over unchanged.

CREATE TABLE agent_keys (
    id       INTEGER PRIMARY KEY,
    agent_id TEXT NOT NULL UNIQUE REFERENCES agents (id) ON DELETE CASCADE
);

INSERT INTO agent_keys (agent_id) SELECT id FROM agents ORDER BY started_at, id;

CREATE TRIGGER agents_key_insert AFTER INSERT ON agents BEGIN
    INSERT INTO agent_keys (agent_id) VALUES (new.id);
END;

CREATE TABLE skill_uses_v16 (
    id         INTEGER PRIMARY KEY,
    skill_id   INTEGER NOT NULL REFERENCES skills (id) ON DELETE CASCADE,
    agent_key  INTEGER REFERENCES agent_keys (id) ON DELETE SET NULL,
    success    INTEGER NOT NULL CHECK (success IN (0, 1)),
    task_id    INTEGER REFERENCES tasks (id),
    -- The outcome's own wording, when it is not its task's text (NULL: the task's text, or no task).
    task       TEXT,
    created_at REAL NOT NULL
);

INSERT INTO skill_uses_v16 (id, skill_id, agent_key, success, task_id, task, created_at)
SELECT u.id, u.skill_id, k.id, u.success, u.task_id, u.task, u.created_at
FROM skill_uses AS u LEFT JOIN agent_keys AS k ON k.agent_id = u.agent_id
ORDER BY u.id;

DROP TABLE skill_uses;

ALTER TABLE skill_uses_v16 RENAME TO skill_uses;

CREATE INDEX skill_uses_skill ON skill_uses (skill_id, created_at);

CREATE INDEX skill_uses_agent ON skill_uses (agent_key) WHERE agent_key IS NOT NULL;

CREATE INDEX skill_uses_task ON skill_uses (task_id, skill_id) WHERE task_id IS NOT NULL;

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
