-- Episode cost (issue 32 item 6) and harness hook events (item 5).
--
-- * agents gains what an episode cost: tokens in and out, tool calls and its duration in seconds.
--   NULL means "not reported" (an agent that never says is not one that used nothing). The duration
--   is stored, not derived from started_at/ended_at, because a hook event replayed from the spool
--   is written later than it happened: the harness's own timestamps give the duration. Ranking never
--   reads these columns; the digest and the report do.
-- * hook_events remembers every hook event id applied, so an event delivered twice (a spool replayed
--   after the direct write had committed, a harness retrying) changes nothing the second time.

ALTER TABLE agents ADD COLUMN tokens_in INTEGER CHECK (tokens_in >= 0);
ALTER TABLE agents ADD COLUMN tokens_out INTEGER CHECK (tokens_out >= 0);
ALTER TABLE agents ADD COLUMN tool_calls INTEGER CHECK (tool_calls >= 0);
ALTER TABLE agents ADD COLUMN duration_s REAL CHECK (duration_s >= 0);

CREATE TABLE hook_events (
    event_id    TEXT PRIMARY KEY CHECK (length(event_id) BETWEEN 1 AND 200),
    agent_id    TEXT REFERENCES agents (id) ON DELETE SET NULL,
    kind        TEXT NOT NULL,
    received_at REAL NOT NULL
);
CREATE INDEX hook_events_agent ON hook_events (agent_id);
