-- PostgreSQL form of SQLite's 0020_episode_cost_and_hook_events.sql (see it for why): what an
-- episode cost (NULL: not reported) and the ids of the hook events already applied.

ALTER TABLE agents ADD COLUMN tokens_in BIGINT CHECK (tokens_in >= 0);
ALTER TABLE agents ADD COLUMN tokens_out BIGINT CHECK (tokens_out >= 0);
ALTER TABLE agents ADD COLUMN tool_calls BIGINT CHECK (tool_calls >= 0);
ALTER TABLE agents ADD COLUMN duration_s DOUBLE PRECISION CHECK (duration_s >= 0);

CREATE TABLE hook_events (
    event_id    TEXT PRIMARY KEY CHECK (length(event_id) BETWEEN 1 AND 200),
    agent_id    TEXT REFERENCES agents (id) ON DELETE SET NULL,
    kind        TEXT NOT NULL,
    received_at DOUBLE PRECISION NOT NULL
);
CREATE INDEX hook_events_agent ON hook_events (agent_id);
