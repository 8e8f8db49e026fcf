-- Each task text stored once (issue 19): every outcome with a task context stored its text and the
-- 16-hex-digit task_hash, and skill_task_stats was keyed by the hex text too, so one outcome wrote
-- the same ~40 bytes into the row, the task index and the counter row and its index. Now:
--
-- * `tasks` holds one row per task context: its key is task_hash's 64 bits read as a signed
--   integer (so the digest is unchanged and printf('%016x', id) gives the hex back exactly), its
--   text the first wording recorded for it.
-- * skill_uses refers to it by `task_id`; its `task` column is NULL unless the outcome's wording is
--   not that text (another wording with the same content words, a true 64-bit collision, or a text
--   without content words and so without a task context), so no wording is lost. Two texts whose
--   digests collide share one task context, as they shared one task_hash before.
-- * skill_task_stats is keyed by (skill_id, task_id): every reader asks for one skill's row of one
--   task or for one skill's rows, and a skill's deletion cascades along the same key, so the
--   separate skill index goes.
-- Existing rows move over unchanged and the counters are copied as they were (exact since 9).

CREATE TABLE tasks (
    id   INTEGER PRIMARY KEY,
    text TEXT NOT NULL
);

-- Each hex digest (of a use row, or of a counter row whose use rows are gone) and its integer key.
CREATE TABLE task_keys_v14 (
    task_hash TEXT PRIMARY KEY,
    id        INTEGER NOT NULL
) WITHOUT ROWID;

INSERT INTO task_keys_v14 (task_hash, id)
SELECT task_hash, ((instr('0123456789abcdef', substr(task_hash, 1, 1)) - 1) << 60)
           | ((instr('0123456789abcdef', substr(task_hash, 2, 1)) - 1) << 56)
           | ((instr('0123456789abcdef', substr(task_hash, 3, 1)) - 1) << 52)
           | ((instr('0123456789abcdef', substr(task_hash, 4, 1)) - 1) << 48)
           | ((instr('0123456789abcdef', substr(task_hash, 5, 1)) - 1) << 44)
           | ((instr('0123456789abcdef', substr(task_hash, 6, 1)) - 1) << 40)
           | ((instr('0123456789abcdef', substr(task_hash, 7, 1)) - 1) << 36)
           | ((instr('0123456789abcdef', substr(task_hash, 8, 1)) - 1) << 32)
           | ((instr('0123456789abcdef', substr(task_hash, 9, 1)) - 1) << 28)
           | ((instr('0123456789abcdef', substr(task_hash, 10, 1)) - 1) << 24)
           | ((instr('0123456789abcdef', substr(task_hash, 11, 1)) - 1) << 20)
           | ((instr('0123456789abcdef', substr(task_hash, 12, 1)) - 1) << 16)
           | ((instr('0123456789abcdef', substr(task_hash, 13, 1)) - 1) << 12)
           | ((instr('0123456789abcdef', substr(task_hash, 14, 1)) - 1) << 8)
           | ((instr('0123456789abcdef', substr(task_hash, 15, 1)) - 1) << 4)
           | (instr('0123456789abcdef', substr(task_hash, 16, 1)) - 1)
FROM (SELECT task_hash FROM skill_uses WHERE task_hash IS NOT NULL
      UNION SELECT task_hash FROM skill_task_stats);

INSERT INTO tasks (id, text)
SELECT k.id, (SELECT u.task FROM skill_uses AS u WHERE u.task_hash = k.task_hash ORDER BY u.id LIMIT 1)
FROM task_keys_v14 AS k
WHERE EXISTS (SELECT 1 FROM skill_uses AS u WHERE u.task_hash = k.task_hash AND u.task IS NOT NULL)
ORDER BY k.id;

CREATE TABLE skill_uses_v14 (
    id         INTEGER PRIMARY KEY,
    skill_id   INTEGER NOT NULL REFERENCES skills (id) ON DELETE CASCADE,
    agent_id   TEXT REFERENCES agents (id) ON DELETE SET NULL,
    success    INTEGER NOT NULL CHECK (success IN (0, 1)),
    task_id    INTEGER REFERENCES tasks (id),
    -- The outcome's own wording, when it is not its task's text (NULL: the task's text, or no task).
    task       TEXT,
    created_at REAL NOT NULL
);

INSERT INTO skill_uses_v14 (id, skill_id, agent_id, success, task_id, task, created_at)
SELECT u.id, u.skill_id, u.agent_id, u.success, k.id,
       CASE WHEN t.id IS NOT NULL AND u.task IS t.text THEN NULL ELSE u.task END, u.created_at
FROM skill_uses AS u
LEFT JOIN task_keys_v14 AS k ON k.task_hash = u.task_hash
LEFT JOIN tasks AS t ON t.id = k.id
ORDER BY u.id;

CREATE TABLE skill_task_stats_v14 (
    skill_id     INTEGER NOT NULL REFERENCES skills (id) ON DELETE CASCADE,
    task_id      INTEGER NOT NULL,
    uses         INTEGER NOT NULL DEFAULT 0 CHECK (uses >= 0),
    successes    INTEGER NOT NULL DEFAULT 0 CHECK (successes >= 0 AND successes <= uses),
    last_used_at REAL,
    PRIMARY KEY (skill_id, task_id)
) WITHOUT ROWID;

INSERT INTO skill_task_stats_v14 (skill_id, task_id, uses, successes, last_used_at)
SELECT s.skill_id, t.id, s.uses, s.successes, s.last_used_at
FROM skill_task_stats AS s JOIN task_keys_v14 AS t ON t.task_hash = s.task_hash;

DROP TABLE skill_task_stats;

DROP TABLE task_keys_v14;

DROP TABLE skill_uses;

ALTER TABLE skill_uses_v14 RENAME TO skill_uses;

ALTER TABLE skill_task_stats_v14 RENAME TO skill_task_stats;

CREATE INDEX skill_uses_skill ON skill_uses (skill_id, created_at);

CREATE INDEX skill_uses_agent ON skill_uses (agent_id, skill_id);

CREATE INDEX skill_uses_task ON skill_uses (task_id, skill_id) WHERE task_id IS NOT NULL;

-- The counters, as before; the task part is a trigger of its own whose WHEN skips outcomes without a
-- task context (most of the fast path's), so they do not run its statement at all.
CREATE TRIGGER skill_uses_count_insert AFTER INSERT ON skill_uses BEGIN
    INSERT INTO skill_stats (skill_id, uses, successes, last_used_at)
    VALUES (new.skill_id, 1, new.success, new.created_at)
    ON CONFLICT (skill_id) DO UPDATE SET
        uses = uses + 1,
        successes = successes + excluded.successes,
        last_used_at = max(coalesce(last_used_at, excluded.last_used_at), excluded.last_used_at);
END;

CREATE TRIGGER skill_uses_task_count_insert AFTER INSERT ON skill_uses WHEN new.task_id IS NOT NULL BEGIN
    INSERT INTO skill_task_stats (skill_id, task_id, uses, successes, last_used_at)
    VALUES (new.skill_id, new.task_id, 1, new.success, new.created_at)
    ON CONFLICT (skill_id, task_id) DO UPDATE SET
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
                        WHERE skill_id = old.skill_id AND task_id = old.task_id)
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
        successes = successes - old.success,
        last_used_at = (SELECT max(created_at) FROM skill_uses
                        WHERE skill_id = old.skill_id AND task_id = old.task_id)
    WHERE skill_id = old.skill_id AND task_id = old.task_id;
    INSERT INTO skill_stats (skill_id, uses, successes, last_used_at)
    VALUES (new.skill_id, 1, new.success, new.created_at)
    ON CONFLICT (skill_id) DO UPDATE SET
        uses = uses + 1,
        successes = successes + excluded.successes,
        last_used_at = max(coalesce(last_used_at, excluded.last_used_at), excluded.last_used_at);
    INSERT INTO skill_task_stats (skill_id, task_id, uses, successes, last_used_at)
    SELECT new.skill_id, new.task_id, 1, new.success, new.created_at WHERE new.task_id IS NOT NULL
    ON CONFLICT (skill_id, task_id) DO UPDATE SET
        uses = uses + 1,
        successes = successes + excluded.successes,
        last_used_at = max(coalesce(last_used_at, excluded.last_used_at), excluded.last_used_at);
END;
