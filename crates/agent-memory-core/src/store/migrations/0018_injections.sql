-- 0018: every injection on record. Each time context is handed to an agent (the session-start
-- briefing, prompt-time recall, a file's context, the MCP `briefing` tool), one row says when,
-- to whom, through which channel, what it cost and how many candidates the budget left out;
-- `items` names what it held, by typed id (`o12`, `s3`, `m7`). The work pass prunes old rows
-- (`store/injections.rs`); the hook only appends, one row per injection.

CREATE TABLE injections (
    id         INTEGER PRIMARY KEY,
    at         INTEGER NOT NULL,            -- Unix milliseconds
    agent      TEXT    NOT NULL,            -- canonical agent name, or the MCP client's name
    session    TEXT,                        -- the agent's own session id; NULL for MCP
    project_id INTEGER REFERENCES projects (id),
    channel    TEXT    NOT NULL,            -- briefing, recall, file, mcp-briefing
    tokens     INTEGER NOT NULL,            -- the whole context as handed, wrapped
    cut        INTEGER NOT NULL,            -- candidates the budget left out
    -- What it held, in the order shown: [["o12", 40], ["m7", 18]], a typed id and the tokens of
    -- its line. One row, so the hook writes one row; a read of one item's record looks for
    -- `"m7"` in the text.
    items      TEXT    NOT NULL DEFAULT '[]'
);
CREATE INDEX injections_at ON injections (at);
CREATE INDEX injections_session ON injections (session, agent);
