-- 0001: the team database. Reviewed memory of the members of one or more teams, each row with
-- a global id, the member and machine it came from, and a revision from one sequence that a
-- pull reads onward from. The server, not the client, decides who reads what: every member
-- logs in as a role of their own, the membership table says which team a role belongs to, and
-- row-level security lets a member read their team's rows and write only their own.

CREATE EXTENSION IF NOT EXISTS vector;

-- The group every member's role is granted; it holds the table privileges, RLS the rows.
DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'agent_memory_member') THEN
        CREATE ROLE agent_memory_member NOLOGIN;
    END IF;
END
$$;

CREATE TABLE agent_memory.members (
    role      name PRIMARY KEY,                 -- the member's login role
    team      text NOT NULL,
    joined_at timestamptz NOT NULL DEFAULT now()
);

-- The team of the role logged in; NULL for a role that is no member. Security definer, so the
-- policies can read the membership table whatever its own policy lets the caller see (inside
-- it `current_user` is the owner, so it asks for `session_user`, the role that logged in).
CREATE FUNCTION agent_memory.my_team() RETURNS text
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $$ SELECT team FROM agent_memory.members WHERE role = session_user $$;

CREATE SEQUENCE agent_memory.revision;

CREATE TABLE agent_memory.memories (
    gid           uuid PRIMARY KEY,              -- UUID v7, given by the machine that pushed it first
    team          text NOT NULL,                 -- set by the server from the membership
    member_role   name NOT NULL,                 -- set by the server: the role that wrote it
    member        text NOT NULL,                 -- the name teammates see
    machine       text NOT NULL,
    agent         text NOT NULL,                 -- the agent that learned it, or remembered
    project_key   text,                          -- git:<normalized origin>; NULL for global memory
    project_name  text,
    tier          text NOT NULL CHECK (tier IN ('L2', 'L3')),
    kind          text NOT NULL,
    text          text NOT NULL,
    importance    integer NOT NULL,
    status        text NOT NULL,                 -- active, superseded, forgotten (a tombstone)
    supersedes    uuid,
    superseded_by uuid,
    conflict_of   uuid,                          -- this version was made on a second machine beside that one
    created_at    bigint NOT NULL,               -- Unix milliseconds, as the member's store has them
    updated_at    bigint NOT NULL,
    revision      bigint NOT NULL,               -- set by the server at every write
    search_text   tsvector NOT NULL,             -- over the same CJK-bigram text the local store indexes
    model         text,                          -- the embedding model of `embedding`
    embedding     vector
);
CREATE INDEX memories_revision ON agent_memory.memories (team, revision);
CREATE INDEX memories_project ON agent_memory.memories (team, project_key, status);
CREATE INDEX memories_search ON agent_memory.memories USING gin (search_text);

-- Every write takes the next revision and the writer's team and role from the server, so a
-- client can neither hide a change from a pull nor write in another's name.
CREATE FUNCTION agent_memory.stamp() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $$
BEGIN
    NEW.revision := nextval('agent_memory.revision');
    NEW.team := agent_memory.my_team();
    NEW.member_role := session_user;
    IF NEW.team IS NULL THEN
        RAISE EXCEPTION 'role % is no member of a team', session_user
            USING HINT = 'the database owner adds it with SELECT agent_memory.add_member(''ROLE'', ''TEAM'')';
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER memories_stamp BEFORE INSERT OR UPDATE ON agent_memory.memories
    FOR EACH ROW EXECUTE FUNCTION agent_memory.stamp();

ALTER TABLE agent_memory.members ENABLE ROW LEVEL SECURITY;
ALTER TABLE agent_memory.memories ENABLE ROW LEVEL SECURITY;
CREATE POLICY members_read ON agent_memory.members FOR SELECT
    USING (team = agent_memory.my_team());
CREATE POLICY memories_read ON agent_memory.memories FOR SELECT
    USING (team = agent_memory.my_team());
CREATE POLICY memories_insert ON agent_memory.memories FOR INSERT
    WITH CHECK (member_role = session_user AND team = agent_memory.my_team());
CREATE POLICY memories_update ON agent_memory.memories FOR UPDATE
    USING (member_role = session_user AND team = agent_memory.my_team())
    WITH CHECK (member_role = session_user AND team = agent_memory.my_team());

GRANT USAGE ON SCHEMA agent_memory TO agent_memory_member;
GRANT SELECT ON agent_memory.members TO agent_memory_member;
GRANT SELECT ON agent_memory.schema_version TO agent_memory_member;
GRANT SELECT, INSERT, UPDATE ON agent_memory.memories TO agent_memory_member;
GRANT EXECUTE ON FUNCTION agent_memory.my_team() TO agent_memory_member;
REVOKE ALL ON FUNCTION agent_memory.my_team() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION agent_memory.my_team() TO agent_memory_member;

-- The team's active memory matching a text-search query, best first: what `search --team`
-- asks. A member reads the table through row-level security, but a policy keeps the planner
-- from using the full-text index for a caller's own condition (the match operator is not
-- leakproof), so every search would read the whole table. This function runs as the owner and
-- applies the caller's team itself. Its cost is bounded by the results, whatever the planner
-- estimates for rare terms: it first counts up to 2,000 matches through the full-text index;
-- when there are no more, it ranks them all; when there are, the query is a common one, and it
-- ranks the 500 newest matches, found by walking the revision index.
CREATE FUNCTION agent_memory.search(query text, project text, max_rows integer)
    RETURNS TABLE (gid text, member text, agent text, project_name text, tier text, kind text,
                   text text, updated_at bigint, rank real)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp SET enable_indexscan = on SET enable_bitmapscan = on
    AS $$
DECLARE
    caller_team text := agent_memory.my_team();
    matches text;
    found integer;
BEGIN
    IF caller_team IS NULL THEN
        RETURN;
    END IF;
    matches := format(
        'SELECT m.* FROM agent_memory.memories m
         WHERE m.team = %L AND m.status = ''active''
           AND m.search_text @@ to_tsquery(''simple'', %L)
           AND (%L::text IS NULL OR m.project_key = %L OR m.project_key IS NULL)',
        caller_team, query, project, project);
    PERFORM set_config('enable_indexscan', 'off', true);
    EXECUTE format('SELECT count(*) FROM (%s LIMIT 2001) x', matches) INTO found;
    IF found > 2000 THEN
        PERFORM set_config('enable_indexscan', 'on', true);
        PERFORM set_config('enable_bitmapscan', 'off', true);
        matches := matches || ' ORDER BY m.revision DESC LIMIT 500';
    END IF;
    RETURN QUERY EXECUTE format(
        'SELECT c.gid::text, c.member, c.agent, c.project_name, c.tier, c.kind, c.text,
                c.updated_at, ts_rank(c.search_text, q) AS rank
         FROM (%s) c, to_tsquery(''simple'', %L) q
         ORDER BY rank DESC, c.updated_at DESC LIMIT %s',
        matches, query, greatest(1, least(max_rows, 1000)));
END
$$;
REVOKE ALL ON FUNCTION agent_memory.search(text, text, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION agent_memory.search(text, text, integer) TO agent_memory_member;

-- Adds a login role to a team (or moves it to another), for the database owner:
-- SELECT agent_memory.add_member('alice', 'core');
CREATE FUNCTION agent_memory.add_member(member_role name, member_team text) RETURNS void
    LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
    AS $$
BEGIN
    INSERT INTO agent_memory.members (role, team) VALUES (member_role, member_team)
        ON CONFLICT (role) DO UPDATE SET team = excluded.team;
    EXECUTE format('GRANT agent_memory_member TO %I', member_role);
END
$$;
REVOKE ALL ON FUNCTION agent_memory.add_member(name, text) FROM PUBLIC;
