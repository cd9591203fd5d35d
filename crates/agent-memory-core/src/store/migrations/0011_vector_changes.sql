-- 0011: a count of the changes to each model's stored vectors. A copy of a model's matrix kept
-- outside the store (store/vector_file.rs) records the counts it was written at: when no row
-- was removed or rewritten since, and the rows added since are exactly the items newer than
-- its newest, it is current once those are read; otherwise it is read no more.

CREATE TABLE vector_changes (
    model   TEXT    PRIMARY KEY,
    added   INTEGER NOT NULL DEFAULT 0,
    removed INTEGER NOT NULL DEFAULT 0    -- rows deleted or rewritten
) WITHOUT ROWID;

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

-- Vectors already stored count as added, so the first copy written records them.
INSERT INTO vector_changes (model, added) SELECT model, count(*) FROM vectors GROUP BY model;
