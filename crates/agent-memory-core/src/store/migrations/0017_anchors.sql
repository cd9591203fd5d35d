-- 0017: what memory rests on. Anchors tie observations and memories to the files they are
-- about, fingerprinted when the work pass made them; every injection checks them against the
-- working tree. Sessions keep the branch they worked on, so work on a feature branch stays out
-- of other branches' context until it is merged.

CREATE TABLE anchors (
    item_kind     TEXT    NOT NULL,  -- observation or memory
    item_id       INTEGER NOT NULL,
    project_id    INTEGER,           -- whose top level `path` is relative to
    path          TEXT    NOT NULL,  -- relative to the project's top level (absolute outside it)
    size          INTEGER NOT NULL,  -- the file as the item knew it
    mtime_ms      INTEGER NOT NULL,
    hash          TEXT    NOT NULL,  -- SHA-256 of its bytes (the first 8 MiB, and the size); ''
                                     -- when the file had moved on before it was anchored
    commit_sha    TEXT,              -- the checkout's commit when it was anchored
    anchored_at   INTEGER NOT NULL,
    -- What the last check found, so a file that changed is hashed once, not at every injection.
    checked_size  INTEGER,
    checked_mtime INTEGER,
    changed_at    INTEGER,           -- when the file changed (its modification time); NULL: fresh
    PRIMARY KEY (item_kind, item_id, path)
) WITHOUT ROWID;
CREATE INDEX anchors_path ON anchors (path);

-- How far the work pass has anchored: the highest observation and memory id it looked at.
CREATE TABLE anchor_cursor (
    item_kind TEXT    PRIMARY KEY,
    after_id  INTEGER NOT NULL
) WITHOUT ROWID;
-- Items stored before anchors existed are not anchored after the fact: their files may have
-- changed since, and a fingerprint taken now would call them fresh.
INSERT INTO anchor_cursor (item_kind, after_id)
    SELECT 'observation', coalesce(max(id), 0) FROM observations
    UNION ALL SELECT 'memory', coalesce(max(id), 0) FROM memories;

-- The branch the hook saw a session's checkout on (`branch`), and what the work pass made of
-- it: `work_branch` is set when that is not the repository's default branch, `work_commit`
-- once the branch holds commits of its own (the first tip seen that the default branch does
-- not reach), and `branch_seen` is the `branch` it last judged.
ALTER TABLE sessions ADD COLUMN branch TEXT;
ALTER TABLE sessions ADD COLUMN branch_seen TEXT;
ALTER TABLE sessions ADD COLUMN work_branch TEXT;
ALTER TABLE sessions ADD COLUMN work_commit TEXT;
CREATE INDEX sessions_work ON sessions (project_id, work_branch) WHERE work_branch IS NOT NULL;
-- The sessions whose branch the work pass has yet to judge: few, however many sessions there are.
CREATE INDEX sessions_unjudged ON sessions (project_id) WHERE branch IS NOT branch_seen;

ALTER TABLE projects ADD COLUMN default_branch TEXT;

-- Which local branches reach a session's work commit: found by the work pass with git, read by
-- the hooks, which run no git.
CREATE TABLE branch_merges (
    project_id  INTEGER NOT NULL,
    commit_sha  TEXT    NOT NULL,
    into_branch TEXT    NOT NULL,
    PRIMARY KEY (project_id, commit_sha, into_branch)
) WITHOUT ROWID;

-- The tips of a project's branches at the last look, so merges are looked for only when one moved.
CREATE TABLE branch_tips (
    project_id INTEGER NOT NULL,
    branch     TEXT    NOT NULL,
    tip        TEXT    NOT NULL,
    PRIMARY KEY (project_id, branch)
) WITHOUT ROWID;
