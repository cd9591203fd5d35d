-- 0007: distilled text is indexed with the English stems of its words beside the words
-- (am_fts_stemmed), so a search for `failed tests` finds `test failing`. Raw events keep the
-- plain text. The three indexes are rebuilt from their tables.

DROP TRIGGER observations_fts_insert;
CREATE TRIGGER observations_fts_insert AFTER INSERT ON observations BEGIN
    INSERT INTO observations_fts (rowid, text) VALUES (new.id, am_fts_stemmed(
        new.title || ' ' || new.subtitle || ' ' || new.facts || ' ' || new.narrative || ' ' ||
        new.concepts || ' ' || new.files_read || ' ' || new.files_modified));
END;
INSERT INTO observations_fts (observations_fts) VALUES ('delete-all');
INSERT INTO observations_fts (rowid, text)
SELECT id, am_fts_stemmed(title || ' ' || subtitle || ' ' || facts || ' ' || narrative || ' ' ||
                          concepts || ' ' || files_read || ' ' || files_modified)
FROM observations;

DROP TRIGGER summaries_fts_insert;
DROP TRIGGER summaries_fts_update;
CREATE TRIGGER summaries_fts_insert AFTER INSERT ON summaries BEGIN
    INSERT INTO summaries_fts (rowid, text) VALUES (new.id, am_fts_stemmed(
        new.request || ' ' || new.investigated || ' ' || new.learned || ' ' || new.completed ||
        ' ' || new.next_steps));
END;
CREATE TRIGGER summaries_fts_update AFTER UPDATE ON summaries BEGIN
    DELETE FROM summaries_fts WHERE rowid = old.id;
    INSERT INTO summaries_fts (rowid, text) VALUES (new.id, am_fts_stemmed(
        new.request || ' ' || new.investigated || ' ' || new.learned || ' ' || new.completed ||
        ' ' || new.next_steps));
END;
INSERT INTO summaries_fts (summaries_fts) VALUES ('delete-all');
INSERT INTO summaries_fts (rowid, text)
SELECT id, am_fts_stemmed(request || ' ' || investigated || ' ' || learned || ' ' || completed ||
                          ' ' || next_steps)
FROM summaries;

DROP TRIGGER memories_fts_insert;
DROP TRIGGER memories_fts_update;
CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts (rowid, text) VALUES (new.id, am_fts_stemmed(new.text));
END;
CREATE TRIGGER memories_fts_update AFTER UPDATE OF text ON memories BEGIN
    DELETE FROM memories_fts WHERE rowid = old.id;
    INSERT INTO memories_fts (rowid, text) VALUES (new.id, am_fts_stemmed(new.text));
END;
INSERT INTO memories_fts (memories_fts) VALUES ('delete-all');
INSERT INTO memories_fts (rowid, text) SELECT id, am_fts_stemmed(text) FROM memories;
