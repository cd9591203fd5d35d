-- 0014: which events were stored after the fact. A hook stores its event as it happens, so those
-- events' row ids are the order they happened in, whatever the wall clock said; events read
-- later from an agent's transcript, drained from the spool or imported are placed among them by
-- their time. Events stored before this version keep being ordered by time, as they were.

ALTER TABLE events ADD COLUMN late INTEGER NOT NULL DEFAULT 0;
UPDATE events SET late = 1;
