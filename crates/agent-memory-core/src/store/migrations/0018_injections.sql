-- 0018: every injection on record. Each time context is handed to an agent (the session-start
-- briefing, prompt-time recall, a file's context, the MCP `briefing` tool), one row says when,
-- to whom, through which channel, what it cost and how many candidates the budget left out;
-- `injected_items` names the items it held, by their typed id (`o12`, `s3`, `m7`), so "when
-- was this item last handed, and to whom" is one index lookup. The work pass prunes old rows
-- (`store/injections.rs`); the hook only appends.

CREATE TABLE injections (
    id         INTEGER PRIMARY KEY,
    at         INTEGER NOT NULL,            -- Unix milliseconds
    agent      TEXT    NOT NULL,            -- canonical agent name, or the MCP client's name
    session    TEXT,                        -- the agent's own session id; NULL for MCP
    project_id INTEGER REFERENCES projects (id),
    channel    TEXT    NOT NULL,            -- briefing, recall, file, mcp-briefing
    tokens     INTEGER NOT NULL,            -- the whole context as handed, wrapped
    cut        INTEGER NOT NULL             -- candidates the budget left out
);
CREATE INDEX injections_at ON injections (at);
CREATE INDEX injections_session ON injections (session, agent);

CREATE TABLE injected_items (
    injection_id INTEGER NOT NULL REFERENCES injections (id),
    place        INTEGER NOT NULL,          -- its order in the context, from 0
    item         TEXT    NOT NULL,          -- typed id: o12, s3, m7, e45
    tokens       INTEGER NOT NULL,          -- its line (or block) in the context
    PRIMARY KEY (injection_id, place)
) WITHOUT ROWID;
CREATE INDEX injected_items_item ON injected_items (item, injection_id);
