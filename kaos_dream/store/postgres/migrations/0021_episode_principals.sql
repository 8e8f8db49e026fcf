-- Every episode names the principal that opened it (see the SQLite migration of the same name):
-- prune and promotion rules count distinct principals; a principal's open episodes are capped.
-- Episodes from before it have no principal (NULL) and each counts as its own.

ALTER TABLE agents ADD COLUMN principal TEXT CHECK (principal IS NULL OR length(trim(principal)) > 0);

CREATE INDEX agents_running_principal ON agents (principal, started_at) WHERE state = 'running';
