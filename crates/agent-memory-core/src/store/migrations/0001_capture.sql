-- 0001: the capture store. Projects and sessions give events their context; events are the
-- append-only raw material every later stage reads; events_fts makes them searchable (kept in sync
-- by triggers, fed CJK-bigram shadow text by am_fts_text); hook_runs records every hook run so
-- `status` can show outcomes and the hook error rate.

CREATE TABLE projects (
    id         INTEGER PRIMARY KEY,
    key        TEXT    NOT NULL UNIQUE,   -- git:<normalized origin> or path:<root>
    name       TEXT    NOT NULL,
    root       TEXT    NOT NULL,
    origin     TEXT,
    created_at INTEGER NOT NULL
);

-- Roots a user registered by hand; the longest one containing a directory claims it.
CREATE TABLE project_roots (
    root       TEXT    PRIMARY KEY,
    project_id INTEGER NOT NULL REFERENCES projects (id)
) WITHOUT ROWID;

CREATE TABLE sessions (
    id              INTEGER PRIMARY KEY,
    agent           TEXT    NOT NULL,
    source_id       TEXT    NOT NULL,     -- the agent's own session id
    project_id      INTEGER REFERENCES projects (id),
    cwd             TEXT,
    transcript_path TEXT,
    title           TEXT,
    started_at      INTEGER NOT NULL,
    last_event_at   INTEGER NOT NULL,
    ended_at        INTEGER,
    UNIQUE (agent, source_id)
);
CREATE INDEX sessions_project ON sessions (project_id, last_event_at);

CREATE TABLE events (
    id           INTEGER PRIMARY KEY,
    uid          TEXT    NOT NULL UNIQUE, -- assigned at capture; makes spool drain and import idempotent
    session_id   INTEGER NOT NULL REFERENCES sessions (id),
    project_id   INTEGER REFERENCES projects (id),
    agent        TEXT    NOT NULL,
    kind         TEXT    NOT NULL,
    source_event TEXT    NOT NULL,
    at           INTEGER NOT NULL,        -- unix milliseconds
    tool         TEXT,
    tool_kind    TEXT,
    summary      TEXT    NOT NULL,
    body         TEXT    NOT NULL DEFAULT '',
    payload      TEXT    NOT NULL DEFAULT '{}',
    files        TEXT    NOT NULL DEFAULT '[]',
    sensitivity  TEXT    NOT NULL DEFAULT 'normal',
    content_hash TEXT    NOT NULL,
    cwd          TEXT
);
CREATE INDEX events_session ON events (session_id, id);
CREATE INDEX events_at ON events (at);

-- Contentless: the text lives in events; the index holds only the shadow tokens.
CREATE VIRTUAL TABLE events_fts USING fts5 (
    text,
    content = '',
    contentless_delete = 1,
    tokenize = 'unicode61 remove_diacritics 2'
);

-- Bulk writers (import) switch the trigger off with am_fts_deferred() and index all their
-- rows in one statement at the end: FTS5 flushes a segment per statement otherwise.
CREATE TRIGGER events_fts_insert AFTER INSERT ON events WHEN NOT am_fts_deferred() BEGIN
    INSERT INTO events_fts (rowid, text) VALUES (new.id, am_fts_text(new.summary || ' ' || new.body));
END;
CREATE TRIGGER events_fts_delete AFTER DELETE ON events BEGIN
    DELETE FROM events_fts WHERE rowid = old.id;
END;
CREATE TRIGGER events_fts_update AFTER UPDATE OF summary, body ON events BEGIN
    DELETE FROM events_fts WHERE rowid = old.id;
    INSERT INTO events_fts (rowid, text) VALUES (new.id, am_fts_text(new.summary || ' ' || new.body));
END;

CREATE TABLE hook_runs (
    id          INTEGER PRIMARY KEY,
    at          INTEGER NOT NULL,
    agent       TEXT    NOT NULL,
    event_name  TEXT    NOT NULL,
    outcome     TEXT    NOT NULL,  -- stored | duplicate | skipped | filtered | spooled | invalid | failed
    detail      TEXT,              -- filter layer, skip reason or error
    duration_us INTEGER NOT NULL,
    event_uid   TEXT
);
CREATE INDEX hook_runs_at ON hook_runs (at);
