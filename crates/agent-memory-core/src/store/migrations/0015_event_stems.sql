-- 0015: raw events are indexed as distilled text is: with the English stems of their words
-- beside the words (am_fts_stemmed) and the words of their local date (am_date_words), so the
-- search levers that rest on them reach what was captured, not only what was distilled. New
-- events get it from the trigger. The events stored before are indexed again by the work pass,
-- newest first and a batch at a time, so that opening a large store stays instant:
-- events_restem holds the id below which events still hold their plain text.

DROP TRIGGER events_fts_insert;
CREATE TRIGGER events_fts_insert AFTER INSERT ON events WHEN NOT am_fts_deferred() BEGIN
    INSERT INTO events_fts (rowid, text) VALUES (new.id, am_fts_stemmed(
        new.summary || ' ' || new.body || ' ' || am_date_words(new.at)));
END;
DROP TRIGGER events_fts_update;
CREATE TRIGGER events_fts_update AFTER UPDATE OF summary, body ON events BEGIN
    DELETE FROM events_fts WHERE rowid = old.id;
    INSERT INTO events_fts (rowid, text) VALUES (new.id, am_fts_stemmed(
        new.summary || ' ' || new.body || ' ' || am_date_words(new.at)));
END;

CREATE TABLE events_restem (below INTEGER NOT NULL);
INSERT INTO events_restem (below) SELECT coalesce(max(id), 0) + 1 FROM events;

-- What a person or an agent said (a prompt, a closing answer, a note) gets vectors as distilled
-- items do; the work pass finds those events by this index. Vectors go with their event.
CREATE INDEX events_said ON events (id) WHERE kind IN ('prompt', 'stop', 'note');
CREATE TRIGGER events_vectors_delete AFTER DELETE ON events BEGIN
    DELETE FROM vectors WHERE item_kind = 'event' AND item_id = old.id;
    DELETE FROM hits WHERE item_kind = 'event' AND item_id = old.id;
END;
-- Search's neighbours of a said event are the said events before and after it in its session.
CREATE INDEX events_said_session ON events (session_id, id)
    WHERE kind IN ('prompt', 'stop', 'note');

-- Vectors move to a table with row ids. In a table without them, SQLite keeps a row of more
-- than about a thousand bytes in a page of its own, and a vector of 256 floats is just over:
-- 100,000 vectors took 491 MB instead of 149. The counts of changes stay as they were, since
-- the rows do.
CREATE TABLE vectors_moving AS SELECT item_kind, item_id, model, dim, vec FROM vectors;
DROP TABLE vectors;
CREATE TABLE vectors (
    item_kind TEXT    NOT NULL,           -- observation, summary or event
    item_id   INTEGER NOT NULL,
    model     TEXT    NOT NULL,
    dim       INTEGER NOT NULL,           -- 0 for a sparse model's word weights
    vec       BLOB    NOT NULL
);
INSERT INTO vectors (item_kind, item_id, model, dim, vec)
    SELECT item_kind, item_id, model, dim, vec FROM vectors_moving;
DROP TABLE vectors_moving;
CREATE UNIQUE INDEX vectors_item ON vectors (model, item_kind, item_id);
CREATE TRIGGER vector_changes_insert AFTER INSERT ON vectors BEGIN
    INSERT INTO vector_changes (model, added) VALUES (new.model, 1)
    ON CONFLICT (model) DO UPDATE SET added = added + 1;
END;
CREATE TRIGGER vector_changes_delete AFTER DELETE ON vectors BEGIN
    INSERT INTO vector_changes (model, removed) VALUES (old.model, 1)
    ON CONFLICT (model) DO UPDATE SET removed = removed + 1;
END;
CREATE TRIGGER vector_changes_update AFTER UPDATE ON vectors BEGIN
    INSERT INTO vector_changes (model, removed) VALUES (old.model, 1)
    ON CONFLICT (model) DO UPDATE SET removed = removed + 1;
END;
