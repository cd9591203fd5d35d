-- 0016: agents' own history. Each session file (or a database's session) `history import`
-- read whole, at the size and time it had then: it is not read again until it changes.

CREATE TABLE history_read (
    source   TEXT    PRIMARY KEY,  -- a session file's path, or `<database>#<session key>`
    size     INTEGER NOT NULL,     -- bytes of a file; records of a database's session
    modified INTEGER NOT NULL,     -- Unix milliseconds
    read_at  INTEGER NOT NULL
) WITHOUT ROWID;
