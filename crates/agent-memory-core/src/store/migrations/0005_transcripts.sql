-- 0005: transcripts. How far each agent transcript has been read, in bytes, so catching up
-- at a stop reads only what was appended since the last one.

CREATE TABLE transcript_cursors (
    path       TEXT    PRIMARY KEY,
    offset     INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
) WITHOUT ROWID;
