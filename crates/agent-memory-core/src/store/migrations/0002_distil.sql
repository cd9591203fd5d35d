-- 0002: distilled memory. Observations (short structured notes distilled from events) and
-- session summaries, each with a contentless full-text index kept in sync by triggers; the
-- events every observation came from; and each session's distil progress, with the lease that
-- keeps two distil passes off the same session.

CREATE TABLE observations (
    id             INTEGER PRIMARY KEY,
    session_id     INTEGER NOT NULL REFERENCES sessions (id),
    project_id     INTEGER REFERENCES projects (id),
    agent          TEXT    NOT NULL,
    mode           TEXT    NOT NULL,
    kind           TEXT    NOT NULL,      -- one of the mode's types
    title          TEXT    NOT NULL,
    subtitle       TEXT    NOT NULL DEFAULT '',
    facts          TEXT    NOT NULL DEFAULT '[]',
    narrative      TEXT    NOT NULL DEFAULT '',
    concepts       TEXT    NOT NULL DEFAULT '[]',
    files_read     TEXT    NOT NULL DEFAULT '[]',
    files_modified TEXT    NOT NULL DEFAULT '[]',
    at             INTEGER NOT NULL,
    tokens         INTEGER NOT NULL,      -- its own size
    work_tokens    INTEGER NOT NULL,      -- the size of the events it stands for
    distiller      TEXT    NOT NULL,      -- offline, or the LLM provider
    source_key     TEXT    NOT NULL UNIQUE -- session and source events: a repeated pass adds nothing
);
CREATE INDEX observations_session ON observations (session_id, at);
CREATE INDEX observations_at ON observations (at);

CREATE TABLE observation_sources (
    observation_id INTEGER NOT NULL REFERENCES observations (id),
    event_id       INTEGER NOT NULL REFERENCES events (id),
    PRIMARY KEY (observation_id, event_id)
) WITHOUT ROWID;
CREATE INDEX observation_sources_event ON observation_sources (event_id);

CREATE VIRTUAL TABLE observations_fts USING fts5 (
    text,
    content = '',
    contentless_delete = 1,
    tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TRIGGER observations_fts_insert AFTER INSERT ON observations BEGIN
    INSERT INTO observations_fts (rowid, text) VALUES (new.id, am_fts_text(
        new.title || ' ' || new.subtitle || ' ' || new.facts || ' ' || new.narrative || ' ' ||
        new.concepts || ' ' || new.files_read || ' ' || new.files_modified));
END;
CREATE TRIGGER observations_fts_delete AFTER DELETE ON observations BEGIN
    DELETE FROM observations_fts WHERE rowid = old.id;
END;

CREATE TABLE summaries (
    id               INTEGER PRIMARY KEY,
    session_id       INTEGER NOT NULL UNIQUE REFERENCES sessions (id),
    project_id       INTEGER REFERENCES projects (id),
    agent            TEXT    NOT NULL,
    mode             TEXT    NOT NULL,
    request          TEXT    NOT NULL DEFAULT '',
    investigated     TEXT    NOT NULL DEFAULT '[]',
    learned          TEXT    NOT NULL DEFAULT '[]',
    completed        TEXT    NOT NULL DEFAULT '[]',
    next_steps       TEXT    NOT NULL DEFAULT '[]',
    files_read       TEXT    NOT NULL DEFAULT '[]',
    files_modified   TEXT    NOT NULL DEFAULT '[]',
    at               INTEGER NOT NULL,
    through_event_id INTEGER NOT NULL,    -- the last event the summary covers
    tokens           INTEGER NOT NULL,
    work_tokens      INTEGER NOT NULL,
    distiller        TEXT    NOT NULL
);
CREATE INDEX summaries_at ON summaries (at);

CREATE VIRTUAL TABLE summaries_fts USING fts5 (
    text,
    content = '',
    contentless_delete = 1,
    tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TRIGGER summaries_fts_insert AFTER INSERT ON summaries BEGIN
    INSERT INTO summaries_fts (rowid, text) VALUES (new.id, am_fts_text(
        new.request || ' ' || new.investigated || ' ' || new.learned || ' ' || new.completed ||
        ' ' || new.next_steps));
END;
CREATE TRIGGER summaries_fts_delete AFTER DELETE ON summaries BEGIN
    DELETE FROM summaries_fts WHERE rowid = old.id;
END;
CREATE TRIGGER summaries_fts_update AFTER UPDATE ON summaries BEGIN
    DELETE FROM summaries_fts WHERE rowid = old.id;
    INSERT INTO summaries_fts (rowid, text) VALUES (new.id, am_fts_text(
        new.request || ' ' || new.investigated || ' ' || new.learned || ' ' || new.completed ||
        ' ' || new.next_steps));
END;

-- How far the distil worker got in each session, and who is working on it now.
CREATE TABLE distil_progress (
    session_id         INTEGER PRIMARY KEY REFERENCES sessions (id),
    observed_through   INTEGER NOT NULL DEFAULT 0, -- last event id turned into observations
    summarized_through INTEGER NOT NULL DEFAULT 0, -- last event id the summary covers
    lease_owner        TEXT,
    lease_until        INTEGER
);
