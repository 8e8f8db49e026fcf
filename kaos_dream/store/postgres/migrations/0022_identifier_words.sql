-- Identifier-aware full-text index (issue 31 item 3), as SQLite's 0022: each skill name and memory
-- key has beside it the words splitting it as an identifier adds ("craftCraftingTable" -> "craft
-- crafting table"), and the index reads the name followed by them (fulltext.SOURCES). Editing the
-- words drops the entry's index row like editing the name does, so the commit reindexes it. The
-- migration runner then fills the words of existing entries and reindexes every entry in this same
-- transaction (postgres/migrations.py: a Python step, since the splitter is Python).

ALTER TABLE skills ADD COLUMN name_words TEXT NOT NULL DEFAULT '';
ALTER TABLE memories ADD COLUMN key_words TEXT NOT NULL DEFAULT '';

DROP TRIGGER skills_fts_stale ON skills;
DROP TRIGGER skills_fts_required ON skills;
CREATE TRIGGER skills_fts_stale BEFORE UPDATE OF name, name_words, description, tags ON skills
    FOR EACH ROW EXECUTE FUNCTION kaos_fts_stale('skills_fts');
CREATE CONSTRAINT TRIGGER skills_fts_required AFTER INSERT OR UPDATE OF name, name_words, description, tags ON skills
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION kaos_fts_required('skills_fts');

DROP TRIGGER memories_fts_stale ON memories;
DROP TRIGGER memories_fts_required ON memories;
CREATE TRIGGER memories_fts_stale BEFORE UPDATE OF key, key_words, content, kind ON memories
    FOR EACH ROW EXECUTE FUNCTION kaos_fts_stale('memories_fts');
CREATE CONSTRAINT TRIGGER memories_fts_required AFTER INSERT OR UPDATE OF key, key_words, content, kind ON memories
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION kaos_fts_required('memories_fts');
