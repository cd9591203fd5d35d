-- 0010: observations and session summaries in team memory. A project opted in with `[team]
-- share_observations` shares its distilled items, so an item needs what a memory got in 0009:
-- a global id, who it came from (NULL: distilled here), the server's revision last seen and
-- the `at` it was last pushed with (an item whose `at` moved since is pushed again: a summary
-- rewritten to cover more of its session). A forgotten item is deleted here; when it was
-- shared, its global id waits in `team_forgotten` until the tombstone is pushed, and stays
-- there so that a pull never brings it back.

ALTER TABLE observations ADD COLUMN team_gid     TEXT;
ALTER TABLE observations ADD COLUMN team_member  TEXT;
ALTER TABLE observations ADD COLUMN team_machine TEXT;
ALTER TABLE observations ADD COLUMN team_rev     INTEGER;
ALTER TABLE observations ADD COLUMN team_pushed  INTEGER;
CREATE UNIQUE INDEX observations_team_gid ON observations (team_gid) WHERE team_gid IS NOT NULL;

ALTER TABLE summaries ADD COLUMN team_gid     TEXT;
ALTER TABLE summaries ADD COLUMN team_member  TEXT;
ALTER TABLE summaries ADD COLUMN team_machine TEXT;
ALTER TABLE summaries ADD COLUMN team_rev     INTEGER;
ALTER TABLE summaries ADD COLUMN team_pushed  INTEGER;
CREATE UNIQUE INDEX summaries_team_gid ON summaries (team_gid) WHERE team_gid IS NOT NULL;

CREATE TABLE team_forgotten (
    gid          TEXT    PRIMARY KEY,
    item_kind    TEXT    NOT NULL,        -- observation or summary
    forgotten_at INTEGER NOT NULL,
    mine         INTEGER NOT NULL,        -- 1: distilled here, its tombstone is pushed
    pushed       INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
