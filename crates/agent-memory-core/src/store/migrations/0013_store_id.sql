-- 0013: a random identity for this store, written into the header of its exports. An import
-- whose header carries it is this store's own export read back (a backup restored) and keeps
-- its memories as they are; memory from any other file arrives for review.

CREATE TABLE store_identity (
    id TEXT NOT NULL
);
INSERT INTO store_identity (id) VALUES (lower(hex(randomblob(16))));
