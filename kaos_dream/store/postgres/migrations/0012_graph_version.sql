-- PostgreSQL form of SQLite's 0012_graph_version.sql: an edges-only change counter, one row, moved
-- in the writer's own transaction by triggers whenever an edge is inserted or deleted or changes what
-- the cached graph arrays hold (endpoints, relation, strength, pruned). Updates of bookkeeping columns
-- only (activations, verification counts, timestamps) leave it alone, as on SQLite.
CREATE TABLE graph_version (
    id      BIGINT PRIMARY KEY CHECK (id = 1),
    version BIGINT NOT NULL
);
INSERT INTO graph_version (id, version) VALUES (1, 0);

CREATE FUNCTION kaos_graph_version_bump() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE graph_version SET version = version + 1 WHERE id = 1;
    RETURN NULL;
END;
$$;

CREATE TRIGGER edges_version_insert AFTER INSERT ON edges
    FOR EACH ROW EXECUTE FUNCTION kaos_graph_version_bump();
CREATE TRIGGER edges_version_delete AFTER DELETE ON edges
    FOR EACH ROW EXECUTE FUNCTION kaos_graph_version_bump();
CREATE TRIGGER edges_version_update
    AFTER UPDATE OF src_kind, src_id, dst_kind, dst_id, relation, strength, pruned_at ON edges
    FOR EACH ROW
    WHEN (old.strength IS DISTINCT FROM new.strength OR old.pruned_at IS DISTINCT FROM new.pruned_at
          OR old.relation IS DISTINCT FROM new.relation
          OR old.src_kind IS DISTINCT FROM new.src_kind OR old.src_id IS DISTINCT FROM new.src_id
          OR old.dst_kind IS DISTINCT FROM new.dst_kind OR old.dst_id IS DISTINCT FROM new.dst_id)
    EXECUTE FUNCTION kaos_graph_version_bump();
