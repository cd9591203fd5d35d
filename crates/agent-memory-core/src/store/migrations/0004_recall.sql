-- 0004: recall. Vectors of observations and summaries (one row per item and model, an f32
-- little-endian blob, L2-normalised); how often search found each item; which observations
-- read or changed each file, for the file context handed out before a file is read; and each
-- project's running observation totals, so the session-start briefing never sums a table.

CREATE TABLE vectors (
    item_kind TEXT    NOT NULL,           -- observation or summary
    item_id   INTEGER NOT NULL,
    model     TEXT    NOT NULL,
    dim       INTEGER NOT NULL,
    vec       BLOB    NOT NULL,
    PRIMARY KEY (model, item_kind, item_id)
) WITHOUT ROWID;

CREATE TABLE hits (
    item_kind TEXT    NOT NULL,           -- event, observation, summary, …
    item_id   INTEGER NOT NULL,
    count     INTEGER NOT NULL,
    last_at   INTEGER NOT NULL,
    PRIMARY KEY (item_kind, item_id)
) WITHOUT ROWID;

CREATE TABLE observation_files (
    path           TEXT    NOT NULL,      -- as the observation names it (relative to its cwd)
    observation_id INTEGER NOT NULL REFERENCES observations (id),
    modified       INTEGER NOT NULL,      -- 1 when the observation changed the file, 0 read it
    PRIMARY KEY (path, observation_id)
) WITHOUT ROWID;

-- A file both changed and read counts as changed: those rows go in first.
CREATE TRIGGER observation_files_insert AFTER INSERT ON observations BEGIN
    INSERT OR IGNORE INTO observation_files (path, observation_id, modified)
        SELECT value, new.id, 1 FROM json_each(new.files_modified) WHERE type = 'text';
    INSERT OR IGNORE INTO observation_files (path, observation_id, modified)
        SELECT value, new.id, 0 FROM json_each(new.files_read) WHERE type = 'text';
END;
CREATE TRIGGER observation_files_delete AFTER DELETE ON observations BEGIN
    DELETE FROM observation_files WHERE observation_id = old.id;
    DELETE FROM vectors WHERE item_kind = 'observation' AND item_id = old.id;
    DELETE FROM hits WHERE item_kind = 'observation' AND item_id = old.id;
END;

-- The briefing's timeline: a project's newest observations.
CREATE INDEX observations_project ON observations (project_id, at);

CREATE TABLE project_totals (
    project_id   INTEGER PRIMARY KEY REFERENCES projects (id),
    observations INTEGER NOT NULL,
    tokens       INTEGER NOT NULL,        -- to read them all
    work_tokens  INTEGER NOT NULL         -- of the events behind them
);
CREATE TRIGGER project_totals_insert AFTER INSERT ON observations
WHEN new.project_id IS NOT NULL BEGIN
    INSERT INTO project_totals (project_id, observations, tokens, work_tokens)
        VALUES (new.project_id, 1, new.tokens, new.work_tokens)
        ON CONFLICT (project_id) DO UPDATE SET
            observations = observations + 1,
            tokens = tokens + excluded.tokens,
            work_tokens = work_tokens + excluded.work_tokens;
END;
CREATE TRIGGER project_totals_delete AFTER DELETE ON observations
WHEN old.project_id IS NOT NULL BEGIN
    UPDATE project_totals SET
        observations = observations - 1,
        tokens = tokens - old.tokens,
        work_tokens = work_tokens - old.work_tokens
    WHERE project_id = old.project_id;
END;
INSERT INTO project_totals (project_id, observations, tokens, work_tokens)
    SELECT project_id, count(*), sum(tokens), sum(work_tokens) FROM observations
    WHERE project_id IS NOT NULL GROUP BY project_id;

-- A summary rewritten as its session goes on needs a new vector.
CREATE TRIGGER summaries_vectors_update AFTER UPDATE ON summaries BEGIN
    DELETE FROM vectors WHERE item_kind = 'summary' AND item_id = old.id;
END;

INSERT OR IGNORE INTO observation_files (path, observation_id, modified)
    SELECT j.value, o.id, 1 FROM observations o, json_each(o.files_modified) j
    WHERE json_valid(o.files_modified) AND j.type = 'text';
INSERT OR IGNORE INTO observation_files (path, observation_id, modified)
    SELECT j.value, o.id, 0 FROM observations o, json_each(o.files_read) j
    WHERE json_valid(o.files_read) AND j.type = 'text';
