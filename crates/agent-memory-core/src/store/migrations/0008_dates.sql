-- 0008: observations and summaries are indexed with the words of their local date beside their
-- text (am_date_words: `8 May 2023 Monday`), so a query naming a month, a year, a weekday or a
-- day finds what was done then. The two indexes are rebuilt from their tables.

DROP TRIGGER observations_fts_insert;
CREATE TRIGGER observations_fts_insert AFTER INSERT ON observations BEGIN
    INSERT INTO observations_fts (rowid, text) VALUES (new.id, am_fts_stemmed(
        new.title || ' ' || new.subtitle || ' ' || new.facts || ' ' || new.narrative || ' ' ||
        new.concepts || ' ' || new.files_read || ' ' || new.files_modified || ' ' ||
        am_date_words(new.at)));
END;
INSERT INTO observations_fts (observations_fts) VALUES ('delete-all');
INSERT INTO observations_fts (rowid, text)
SELECT id, am_fts_stemmed(title || ' ' || subtitle || ' ' || facts || ' ' || narrative || ' ' ||
                          concepts || ' ' || files_read || ' ' || files_modified || ' ' ||
                          am_date_words(at))
FROM observations;

DROP TRIGGER summaries_fts_insert;
DROP TRIGGER summaries_fts_update;
CREATE TRIGGER summaries_fts_insert AFTER INSERT ON summaries BEGIN
    INSERT INTO summaries_fts (rowid, text) VALUES (new.id, am_fts_stemmed(
        new.request || ' ' || new.investigated || ' ' || new.learned || ' ' || new.completed ||
        ' ' || new.next_steps || ' ' || am_date_words(new.at)));
END;
CREATE TRIGGER summaries_fts_update AFTER UPDATE ON summaries BEGIN
    DELETE FROM summaries_fts WHERE rowid = old.id;
    INSERT INTO summaries_fts (rowid, text) VALUES (new.id, am_fts_stemmed(
        new.request || ' ' || new.investigated || ' ' || new.learned || ' ' || new.completed ||
        ' ' || new.next_steps || ' ' || am_date_words(new.at)));
END;
INSERT INTO summaries_fts (summaries_fts) VALUES ('delete-all');
INSERT INTO summaries_fts (rowid, text)
SELECT id, am_fts_stemmed(request || ' ' || investigated || ' ' || learned || ' ' || completed ||
                          ' ' || next_steps || ' ' || am_date_words(at))
FROM summaries;
