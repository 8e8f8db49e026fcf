-- An edges-only change counter (issue 19). A process caches the graph's CSR arrays; keyed on the
-- file's change counter, any write (a telemetry row, a search's hits) threw 100k edges away and
-- reloaded them. `graph_version` holds one row whose `version` moves, in the writer's own
-- transaction, whenever an edge is inserted or deleted or changes what the arrays hold (endpoints,
-- relation, strength, pruned). Triggers rather than the Python writers bump it, so a writer that
-- forgets (a merge, a cascade from a deleted skill, another tool on the file) cannot leave a
-- process with stale arrays. An update that touches only bookkeeping columns (activations,
-- verification counts, timestamps) does not move it.
CREATE TABLE graph_version (
    id      INTEGER PRIMARY KEY CHECK (id = 1),
    version INTEGER NOT NULL
);
INSERT INTO graph_version (id, version) VALUES (1, 0);

CREATE TRIGGER edges_version_insert AFTER INSERT ON edges BEGIN
    UPDATE graph_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER edges_version_delete AFTER DELETE ON edges BEGIN
    UPDATE graph_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER edges_version_update
AFTER UPDATE OF src_kind, src_id, dst_kind, dst_id, relation, strength, pruned_at ON edges
WHEN old.strength IS NOT new.strength OR old.pruned_at IS NOT new.pruned_at OR old.relation IS NOT new.relation
     OR old.src_kind IS NOT new.src_kind OR old.src_id IS NOT new.src_id
     OR old.dst_kind IS NOT new.dst_kind OR old.dst_id IS NOT new.dst_id
BEGIN
    UPDATE graph_version SET version = version + 1 WHERE id = 1;
END;
