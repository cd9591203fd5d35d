-- 0009: team memory. Reviewed memory is synced with a team's PostgreSQL database, so a memory
-- needs a global id that every machine knows it by, where it came from (the member and
-- machine, for memory pulled from the team; NULL for memory learned here), and what the sync
-- has done with it: the server's revision last seen and the `updated_at` last pushed. A row
-- changed since it was last pushed is the outbox; the pull cursor lives in `team_sync`.

ALTER TABLE memories ADD COLUMN team_gid     TEXT;     -- UUID v7, given at the first push or by the team
ALTER TABLE memories ADD COLUMN team_member  TEXT;     -- who learned it; NULL: learned on this machine
ALTER TABLE memories ADD COLUMN team_machine TEXT;     -- the machine it came from; NULL: this one
ALTER TABLE memories ADD COLUMN team_rev     INTEGER;  -- the server's revision of it last seen
ALTER TABLE memories ADD COLUMN team_pushed  INTEGER;  -- its updated_at when last pushed
ALTER TABLE memories ADD COLUMN team_conflict TEXT;    -- the global id of the version it conflicts with
CREATE UNIQUE INDEX memories_team_gid ON memories (team_gid) WHERE team_gid IS NOT NULL;

-- Small facts of the sync: the pull cursor (the highest server revision pulled), when the last
-- sync ended and how, the server's team and members as last seen.
CREATE TABLE team_sync (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;
