-- 0002: nearest-neighbour indexes on the memories' vectors, so that a semantic search of a
-- team's memory walks a graph (pgvector's HNSW, cosine distance: the vectors have length 1)
-- instead of reading every row. An HNSW index holds vectors of one dimension, and `embedding`
-- holds those of whichever model a member uses, so each index covers the rows of one
-- dimension: 384 (all-MiniLM-L6-v2, multilingual-e5-small) and 256 (potion-base-8M), the
-- models `agent-memory model install` knows by name. A query uses one by naming the same
-- condition and cast:
--   WHERE vector_dims(embedding) = 384 AND model = $1 ORDER BY embedding::vector(384) <=> $2
-- Rows of another dimension are stored and can be searched as before, without an index.

CREATE INDEX memories_embedding_384 ON agent_memory.memories
    USING hnsw ((embedding::vector(384)) vector_cosine_ops)
    WHERE vector_dims(embedding) = 384;
CREATE INDEX memories_embedding_256 ON agent_memory.memories
    USING hnsw ((embedding::vector(256)) vector_cosine_ops)
    WHERE vector_dims(embedding) = 256;
