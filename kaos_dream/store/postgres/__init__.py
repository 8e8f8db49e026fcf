"""The PostgreSQL side of the store (issue 21): connecting, the schema migrations in PostgreSQL's
dialect, and the full-text index whose BM25 matches SQLite FTS5's. Needs the ``[postgres]`` extra
(psycopg 3); nothing here is imported unless a ``postgresql://`` URL is used."""
