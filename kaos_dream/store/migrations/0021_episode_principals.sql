-- Every episode names the principal that opened it (issue 33 item 1): the identity a deployment
-- gives its writer (KAOS_PRINCIPAL / --principal, an MCP server's --principal), else the OS user and
-- host. The dream's prune and promotion rules count distinct principals, not episode ids, so one
-- client that opens many episodes is still one vote; and the number of episodes one principal holds
-- open at once is capped (KAOS_PRINCIPAL_MAX_OPEN_EPISODES).
--
-- Episodes written before this migration have no principal (NULL): each counts as its own, as it
-- did before, so an upgraded library keeps the evidence it had. The partial index serves the cap's
-- count of one principal's running episodes and the dream's sweep of stale ones.

ALTER TABLE agents ADD COLUMN principal TEXT CHECK (principal IS NULL OR length(trim(principal)) > 0);

CREATE INDEX agents_running_principal ON agents (principal, started_at) WHERE state = 'running';
