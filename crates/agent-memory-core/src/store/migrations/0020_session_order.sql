-- 0020: the viewer's home lists sessions newest first, a page at a time; this index lets a page
-- read only its own rows instead of sorting every session.

CREATE INDEX sessions_started ON sessions (started_at, id);
