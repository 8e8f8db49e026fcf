-- Cheaper episode end (the plasticity overhead budget). First, the validation gate stored each episode's
-- verdicts as 5-6 `validations` rows (a table and its primary-key index) plus an `episode_gates`
-- row (a table, its primary-key index and an index on `passed`), dirtying about five extra pages
-- per completion. Now one `episode_gates` row per episode holds the decision and its verdicts (a
-- JSON array); its integer key grows with time, so a new row lands on the table's last page, and
-- the episode finds it through `agents.gate_id` (on the row the episode end rewrites anyway) rather
-- than through an index of its own. Listing newest first is a walk back from the end of the table.
-- Existing verdicts move into the array in the order the CLI always listed them (kind, then
-- validator); `validations` goes.

CREATE TABLE episode_gates_v10 (
    id         INTEGER PRIMARY KEY,
    agent_id   TEXT NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    passed     INTEGER NOT NULL CHECK (passed IN (0, 1)),
    trust      REAL,
    novelty    REAL,
    reason     TEXT NOT NULL,
    -- [{"validator", "kind" (quality|report), "enabled", "score", "passed", "threshold", "reason"}, …]
    verdicts   TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(verdicts)),
    created_at REAL NOT NULL
);

INSERT INTO episode_gates_v10 (agent_id, passed, trust, novelty, reason, verdicts, created_at)
SELECT g.agent_id, g.passed, g.trust, g.novelty, g.reason,
       coalesce((SELECT json_group_array(json_object(
                     'validator', v.validator, 'kind', v.kind,
                     'enabled', json(CASE WHEN v.enabled THEN 'true' ELSE 'false' END),
                     -- REALs through %!.17g: json_object alone prints 15 digits (2/3 would not round-trip)
                     'score', json(CASE WHEN v.score IS NULL THEN 'null' ELSE printf('%!.17g', v.score) END),
                     'passed', json(CASE WHEN v.passed IS NULL THEN 'null' WHEN v.passed THEN 'true' ELSE 'false' END),
                     'threshold', json(CASE WHEN v.threshold IS NULL THEN 'null' ELSE printf('%!.17g', v.threshold) END),
                     'reason', v.reason))
                 FROM (SELECT * FROM validations WHERE agent_id = g.agent_id ORDER BY kind, validator) AS v), '[]'),
       g.created_at
FROM episode_gates AS g
-- Listed newest first by id: ties in time then come out by agent id, as they were listed before.
ORDER BY g.created_at, g.agent_id DESC;

DROP TABLE validations;

DROP TABLE episode_gates;

ALTER TABLE episode_gates_v10 RENAME TO episode_gates;

-- The episode's current gate row (NULL until its end was validated).
ALTER TABLE agents ADD COLUMN gate_id INTEGER;

UPDATE agents SET gate_id = (SELECT max(g.id) FROM episode_gates AS g WHERE g.agent_id = agents.id)
WHERE id IN (SELECT agent_id FROM episode_gates);

-- Every episode end reads which skills, memories and failures its agent touched. The agent
-- indexes now carry the node id too, so that read never visits the tables; an index entry one
-- integer longer costs the telemetry writes nothing measurable (they update these indexes anyway).
DROP INDEX skill_uses_agent;

CREATE INDEX skill_uses_agent ON skill_uses (agent_id, skill_id);

DROP INDEX memory_hits_agent;

CREATE INDEX memory_hits_agent ON memory_hits (agent_id, memory_id);

DROP INDEX failure_occurrences_agent;

CREATE INDEX failure_occurrences_agent ON failure_occurrences (agent_id, fingerprint_id);
