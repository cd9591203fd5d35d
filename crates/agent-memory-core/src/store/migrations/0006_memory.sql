-- 0006: long-term memory. Short statements promoted from observations and summaries (L1
-- candidates) or stated by the user, reviewed into project (L2) or global (L3) memory; a
-- contentless full-text index over their text (CJK-bigram shadow text, as for observations);
-- and which distilled items promotion has already screened, so each is screened once.

CREATE TABLE memories (
    id            INTEGER PRIMARY KEY,               -- stable: a sync keys notes by it
    tier          TEXT    NOT NULL,                  -- L1 candidate, L2 project, L3 global
    kind          TEXT    NOT NULL,                  -- fact, decision, convention, problem, preference
    text          TEXT    NOT NULL,                  -- at most 300 characters
    project_id    INTEGER REFERENCES projects (id),  -- NULL for L3
    importance    INTEGER NOT NULL DEFAULT 5,        -- 1 to 10
    hits          INTEGER NOT NULL DEFAULT 0,
    last_hit      INTEGER,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL,                  -- every change moves it
    status        TEXT    NOT NULL,                  -- candidate, active, rejected, superseded, forgotten
    superseded_by INTEGER REFERENCES memories (id),
    supersedes    INTEGER REFERENCES memories (id),  -- what approving this candidate retires
    sources       TEXT    NOT NULL DEFAULT '[]',     -- ids of observations and summaries: ["o12", "s3"]
    origin        TEXT    NOT NULL                   -- distilled, remembered, imported, or an agent's name
);
CREATE INDEX memories_project ON memories (project_id, status);
CREATE INDEX memories_status ON memories (status, tier);
CREATE INDEX memories_updated ON memories (updated_at);

CREATE VIRTUAL TABLE memories_fts USING fts5 (
    text,
    content = '',
    contentless_delete = 1,
    tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts (rowid, text) VALUES (new.id, am_fts_text(new.text));
END;
CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
    DELETE FROM memories_fts WHERE rowid = old.id;
END;
CREATE TRIGGER memories_fts_update AFTER UPDATE OF text ON memories BEGIN
    DELETE FROM memories_fts WHERE rowid = old.id;
    INSERT INTO memories_fts (rowid, text) VALUES (new.id, am_fts_text(new.text));
END;

-- Observations and summaries promotion has looked at; a summary is looked at again only when
-- it was rewritten to cover more of its session (`version` is the last event it covers).
CREATE TABLE memory_screened (
    item_kind TEXT    NOT NULL,                      -- observation or summary
    item_id   INTEGER NOT NULL,
    version   INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (item_kind, item_id)
) WITHOUT ROWID;
