-- Two tiers of vectors (PostgreSQL; see the SQLite twin): one vector per (kind, entry_id, model).
-- PostgreSQL changes the constraint in place; rows, seq values and the triggers stay as they are
-- (kaos_embedding_drop still drops every vector of an edited or deleted row).

ALTER TABLE embeddings DROP CONSTRAINT embeddings_kind_entry_id_key;
ALTER TABLE embeddings ADD CONSTRAINT embeddings_kind_entry_id_model_key UNIQUE (kind, entry_id, model);
