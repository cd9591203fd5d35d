-- 0019: reactions. Each `[[reactions]]` entry of the configuration runs once per item it
-- matches: `reactions_fired` keeps every item it ran for and how that went (so a second pass
-- never runs it again, and `status` shows failures), and `reaction_cursors` how far it has
-- looked, so each pass reads only what landed since. A reaction seen for the first time starts
-- at what is stored then: adding one never runs it over the whole history.

CREATE TABLE reactions_fired (
    reaction TEXT    NOT NULL,   -- its name in the configuration
    item     TEXT    NOT NULL,   -- o12 (an observation) or m3 (a memory)
    at       INTEGER NOT NULL,   -- Unix milliseconds
    ok       INTEGER NOT NULL,   -- 1: the action succeeded
    detail   TEXT    NOT NULL DEFAULT '',  -- for a failure: what went wrong
    PRIMARY KEY (reaction, item)
) WITHOUT ROWID;
CREATE INDEX reactions_fired_at ON reactions_fired (at);

CREATE TABLE reaction_cursors (
    reaction         TEXT    PRIMARY KEY,
    observation_after INTEGER NOT NULL,  -- the last observation id looked at
    memory_since     INTEGER NOT NULL   -- memories changed after this time (Unix ms) are looked at
) WITHOUT ROWID;
