-- 0012: the projects whose person asked for a brief file (`agent-memory brief --write`). The work
-- pass refreshes only these: a brief.md that arrived with a cloned repository is not an
-- opt-in. `root` is the directory the file was asked for in; `global` records whether the
-- person also asked for global memory in that file.

CREATE TABLE brief_files (
    project_id INTEGER PRIMARY KEY REFERENCES projects (id) ON DELETE CASCADE,
    root       TEXT    NOT NULL,
    global     INTEGER NOT NULL DEFAULT 0,
    asked_at   INTEGER NOT NULL
);
