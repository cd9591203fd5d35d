-- 0003: observations and session summaries of the projects a member opts in, beside the
-- memories, with the same rules (a global id, the member and machine, a revision from the one
-- sequence, row-level security by team); vectors pushed with the model that made them; and one
-- search over both tables that takes full text and a query vector in a single call.
--
-- `items` is a table of its own rather than more rows of `memories`: an item belongs to a
-- session (the summary is its session's), has the fields a distiller wrote rather than one
-- statement, and is never superseded, only forgotten (a tombstone).

CREATE TABLE agent_memory.items (
    gid          uuid PRIMARY KEY,               -- UUID v7, given by the machine that pushed it
    team         text NOT NULL,                  -- set by the server from the membership
    member_role  name NOT NULL,                  -- set by the server: the role that wrote it
    member       text NOT NULL,                  -- the name teammates see
    machine      text NOT NULL,
    agent        text NOT NULL,                  -- the agent of the session it was distilled from
    kind         text NOT NULL CHECK (kind IN ('observation', 'summary')),
    session      uuid NOT NULL,                  -- the session, derived from its agent and id
    project_key  text NOT NULL,                  -- git:<normalized origin>
    project_name text,
    type         text NOT NULL,                  -- an observation's type; `summary` for a summary
    title        text NOT NULL,                  -- an observation's title; a summary's request
    body         jsonb NOT NULL,                 -- the rest of its fields, as the store keeps them
    status       text NOT NULL CHECK (status IN ('active', 'forgotten')),
    at           bigint NOT NULL,                -- Unix milliseconds, as the member's store has it
    revision     bigint NOT NULL,                -- set by the server at every write
    search_text  tsvector NOT NULL,
    model        text,                           -- the embedding model of `embedding`
    embedding    vector
);
CREATE INDEX items_revision ON agent_memory.items (team, revision);
CREATE INDEX items_search ON agent_memory.items USING gin (search_text);
CREATE INDEX items_embedding_384 ON agent_memory.items
    USING hnsw ((embedding::vector(384)) vector_cosine_ops)
    WHERE vector_dims(embedding) = 384;
CREATE INDEX items_embedding_256 ON agent_memory.items
    USING hnsw ((embedding::vector(256)) vector_cosine_ops)
    WHERE vector_dims(embedding) = 256;

CREATE TRIGGER items_stamp BEFORE INSERT OR UPDATE ON agent_memory.items
    FOR EACH ROW EXECUTE FUNCTION agent_memory.stamp();

ALTER TABLE agent_memory.items ENABLE ROW LEVEL SECURITY;
CREATE POLICY items_read ON agent_memory.items FOR SELECT
    USING (team = agent_memory.my_team());
CREATE POLICY items_insert ON agent_memory.items FOR INSERT
    WITH CHECK (member_role = session_user AND team = agent_memory.my_team());
CREATE POLICY items_update ON agent_memory.items FOR UPDATE
    USING (member_role = session_user AND team = agent_memory.my_team())
    WITH CHECK (member_role = session_user AND team = agent_memory.my_team());
GRANT SELECT, INSERT, UPDATE ON agent_memory.items TO agent_memory_member;

-- The team's active memories and items matching a text-search query, and the nearest
-- neighbours of a query vector among those embedded with the same model, in one call: what
-- `search --team` asks. `query_all` (every term) is tried first, `query_any` (any term) when
-- it finds fewer than `max_rows`; either may be NULL. Each text channel is bounded as
-- `agent_memory.search` bounds it (count up to 2,000 matches through the full-text index; past
-- that, the 500 newest of each table); the vector channel reads at most `max_rows` neighbours per table
-- through the HNSW index of the vector's dimension. Each channel runs under its own planner
-- settings and returns its rows with its own score (`rank` or `similarity`, the other NULL); a
-- row both find comes twice, and the caller fuses them. Runs as the owner and applies the
-- caller's team itself, for the reason `agent_memory.search` gives.
CREATE FUNCTION agent_memory.find(query_all text, query_any text, project text,
                                  max_rows integer, model text, query_vector real[])
    RETURNS TABLE (source text, gid text, member text, agent text, project_name text,
                   tier text, kind text, text text, updated_at bigint, rank real,
                   similarity real)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp SET enable_indexscan = on SET enable_bitmapscan = on
    -- One search is one backend's work: starting parallel workers for it costs more than it
    -- saves at these sizes, and would let one member's searches take the server's cores.
    SET max_parallel_workers_per_gather = 0
    AS $$
DECLARE
    caller_team text := agent_memory.my_team();
    n integer := greatest(1, least(max_rows, 1000));
    -- What an item shows: its title, and the line that says most after it.
    item_text constant text := 'i.title || coalesce('': '' || nullif(i.body ->> ''lead'', ''''), '''')';
    tsq text;
    asked text;
    found integer;
    memories text;
    items text;
    matches text;
    ext text;
    dims integer;
    near text;
BEGIN
    IF caller_team IS NULL THEN
        RETURN;
    END IF;
    -- The text channel, over both tables: every term first, then any when that finds fewer
    -- than asked for.
    FOREACH tsq IN ARRAY ARRAY[query_all, query_any] LOOP
        CONTINUE WHEN tsq IS NULL;
        asked := tsq;
        memories := format(
            'SELECT ''memory'' AS source, m.gid, m.member, m.agent, m.project_name, m.tier,
                    m.kind, m.text, m.updated_at, m.revision, m.search_text
             FROM agent_memory.memories m
             WHERE m.team = %1$L AND m.status = ''active''
               AND m.search_text @@ to_tsquery(''simple'', %2$L)
               AND (%3$L::text IS NULL OR m.project_key = %3$L OR m.project_key IS NULL)',
            caller_team, tsq, project);
        items := format(
            'SELECT i.kind, i.gid, i.member, i.agent, i.project_name, NULL, i.type, %4$s,
                    i.at, i.revision, i.search_text
             FROM agent_memory.items i
             WHERE i.team = %1$L AND i.status = ''active''
               AND i.search_text @@ to_tsquery(''simple'', %2$L)
               AND (%3$L::text IS NULL OR i.project_key = %3$L)',
            caller_team, tsq, project, item_text);
        PERFORM set_config('enable_indexscan', 'off', true);
        EXECUTE format('SELECT count(*) FROM (%s UNION ALL %s LIMIT 2001) x', memories, items)
            INTO found;
        EXIT WHEN found >= n;
    END LOOP;
    IF asked IS NOT NULL THEN
        matches := format('%s UNION ALL %s', memories, items);
        IF found > 2000 THEN
            -- Each table's newest matches, walking its revision index (one ordered scan of
            -- the union would not: the planner reads both tables whole instead).
            PERFORM set_config('enable_indexscan', 'on', true);
            PERFORM set_config('enable_bitmapscan', 'off', true);
            matches := format(
                '(%s ORDER BY m.revision DESC LIMIT 500)
                 UNION ALL (%s ORDER BY i.revision DESC LIMIT 500)', memories, items);
        END IF;
        RETURN QUERY EXECUTE format(
            'SELECT c.source, c.gid::text, c.member, c.agent, c.project_name, c.tier, c.kind,
                    c.text, c.updated_at, ts_rank(c.search_text, q), NULL::real
             FROM (%s) c, to_tsquery(''simple'', %L) q
             ORDER BY 10 DESC, c.updated_at DESC LIMIT %s',
            matches, asked, n);
    END IF;
    -- The vector channel: the nearest rows embedded by the same model, through the index of
    -- the vector's dimension when there is one.
    IF model IS NOT NULL AND cardinality(query_vector) > 0 THEN
        SELECT s.nspname INTO ext
        FROM pg_extension e JOIN pg_namespace s ON s.oid = e.extnamespace
        WHERE e.extname = 'vector';
        dims := cardinality(query_vector);
        near := format('%1$I.vector(%2$s) OPERATOR(%1$I.<=>) %3$L::real[]::%1$I.vector(%2$s)',
                       ext, dims, query_vector::text);
        PERFORM set_config('enable_indexscan', 'on', true);
        PERFORM set_config('enable_bitmapscan', 'on', true);
        -- The index finds neighbours before the team, model and project conditions are
        -- applied; pgvector 0.8 and later keep walking it until enough rows pass them (an
        -- older pgvector has no such setting, and returns what its first walk found).
        BEGIN
            PERFORM set_config('hnsw.iterative_scan', 'relaxed_order', true);
        EXCEPTION WHEN OTHERS THEN
            NULL;
        END;
        RETURN QUERY EXECUTE format(
            'SELECT * FROM (
                 SELECT ''memory'' AS source, m.gid::text, m.member, m.agent, m.project_name, m.tier,
                        m.kind, m.text, m.updated_at, NULL::real,
                        (1 - (m.embedding::%1$s))::real AS similarity
                 FROM agent_memory.memories m
                 WHERE m.team = %2$L AND m.status = ''active'' AND m.model = %3$L
                   AND %4$I.vector_dims(m.embedding) = %5$s
                   AND (%6$L::text IS NULL OR m.project_key = %6$L OR m.project_key IS NULL)
                 ORDER BY m.embedding::%1$s LIMIT %7$s) vm
             UNION ALL
             SELECT * FROM (
                 SELECT i.kind, i.gid::text, i.member, i.agent, i.project_name, NULL, i.type, %8$s,
                        i.at, NULL::real, (1 - (i.embedding::%1$s))::real
                 FROM agent_memory.items i
                 WHERE i.team = %2$L AND i.status = ''active'' AND i.model = %3$L
                   AND %4$I.vector_dims(i.embedding) = %5$s
                   AND (%6$L::text IS NULL OR i.project_key = %6$L)
                 ORDER BY i.embedding::%1$s LIMIT %7$s) vi',
            near, caller_team, model, ext, dims, project, n, item_text);
    END IF;
END
$$;
REVOKE ALL ON FUNCTION agent_memory.find(text, text, text, integer, text, real[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION agent_memory.find(text, text, text, integer, text, real[])
    TO agent_memory_member;
