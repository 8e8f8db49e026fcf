-- Plasticity (PostgreSQL): running outcome counters kept by triggers on skill_uses, the task-context
-- index and episode citations. The counters stay exact whoever writes the telemetry, and under
-- concurrent writers (each insert and its counter update share the writer's transaction; the
-- upsert locks the counter row).

CREATE TABLE skill_stats (
    skill_id     BIGINT PRIMARY KEY REFERENCES skills (id) ON DELETE CASCADE,
    uses         BIGINT NOT NULL DEFAULT 0 CHECK (uses >= 0),
    successes    BIGINT NOT NULL DEFAULT 0 CHECK (successes >= 0 AND successes <= uses),
    last_used_at DOUBLE PRECISION
);

CREATE TABLE skill_task_stats (
    task_hash    TEXT NOT NULL,
    skill_id     BIGINT NOT NULL REFERENCES skills (id) ON DELETE CASCADE,
    uses         BIGINT NOT NULL DEFAULT 0 CHECK (uses >= 0),
    successes    BIGINT NOT NULL DEFAULT 0 CHECK (successes >= 0 AND successes <= uses),
    last_used_at DOUBLE PRECISION,
    PRIMARY KEY (task_hash, skill_id)
);
CREATE INDEX skill_task_stats_skill ON skill_task_stats (skill_id);

CREATE INDEX skill_hits_agent_skill ON skill_hits (agent_id, skill_id, id);

ALTER TABLE agents ADD COLUMN citations TEXT NOT NULL DEFAULT '[]' CHECK (kaos_json_valid(citations));

-- Count one outcome in (or, with sign -1, out of) the counters of its skill and task.
CREATE FUNCTION kaos_count_use(row_skill BIGINT, row_success BIGINT, row_task TEXT, row_at DOUBLE PRECISION)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO skill_stats AS s (skill_id, uses, successes, last_used_at)
    VALUES (row_skill, 1, row_success, row_at)
    ON CONFLICT (skill_id) DO UPDATE SET
        uses = s.uses + 1,
        successes = s.successes + excluded.successes,
        last_used_at = greatest(coalesce(s.last_used_at, excluded.last_used_at), excluded.last_used_at);
    IF row_task IS NOT NULL THEN
        INSERT INTO skill_task_stats AS t (task_hash, skill_id, uses, successes, last_used_at)
        VALUES (row_task, row_skill, 1, row_success, row_at)
        ON CONFLICT (task_hash, skill_id) DO UPDATE SET
            uses = t.uses + 1,
            successes = t.successes + excluded.successes,
            last_used_at = greatest(coalesce(t.last_used_at, excluded.last_used_at), excluded.last_used_at);
    END IF;
END;
$$;

CREATE FUNCTION kaos_uncount_use(row_skill BIGINT, row_success BIGINT, row_task TEXT)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    UPDATE skill_stats SET
        uses = uses - 1,
        successes = successes - row_success,
        last_used_at = (SELECT max(created_at) FROM skill_uses WHERE skill_id = row_skill)
    WHERE skill_id = row_skill;
    UPDATE skill_task_stats SET
        uses = uses - 1,
        successes = successes - row_success,
        last_used_at = (SELECT max(created_at) FROM skill_uses WHERE skill_id = row_skill AND task_hash = row_task)
    WHERE task_hash = row_task AND skill_id = row_skill;
END;
$$;

CREATE FUNCTION kaos_skill_uses_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('DELETE', 'UPDATE') THEN
        PERFORM kaos_uncount_use(OLD.skill_id, OLD.success, OLD.task_hash);
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        PERFORM kaos_count_use(NEW.skill_id, NEW.success, NEW.task_hash, NEW.created_at);
        RETURN NEW;
    END IF;
    RETURN OLD;
END;
$$;

CREATE TRIGGER skill_uses_count_insert AFTER INSERT ON skill_uses
    FOR EACH ROW EXECUTE FUNCTION kaos_skill_uses_count();
CREATE TRIGGER skill_uses_count_delete AFTER DELETE ON skill_uses
    FOR EACH ROW EXECUTE FUNCTION kaos_skill_uses_count();
CREATE TRIGGER skill_uses_count_update AFTER UPDATE OF skill_id, success, task_hash, created_at ON skill_uses
    FOR EACH ROW EXECUTE FUNCTION kaos_skill_uses_count();
