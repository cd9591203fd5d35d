-- 0004: the name teammates see is the server's, not the client's. A client could send any name,
-- so one member's rows could show up under another member's name. The database's owner gives
-- each role its display name with `add_member`; the stamping trigger writes it (the role's own
-- name when none was given) into every row, whatever the client sent.

ALTER TABLE agent_memory.members ADD COLUMN display_name text;

CREATE OR REPLACE FUNCTION agent_memory.stamp() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $$
DECLARE
    shown text;
BEGIN
    NEW.revision := nextval('agent_memory.revision');
    NEW.team := agent_memory.my_team();
    NEW.member_role := session_user;
    IF NEW.team IS NULL THEN
        RAISE EXCEPTION 'role % is no member of a team', session_user
            USING HINT = 'the database owner adds it with SELECT agent_memory.add_member(''ROLE'', ''TEAM'', ''Display Name'')';
    END IF;
    SELECT display_name INTO shown FROM agent_memory.members WHERE role = session_user;
    NEW.member := coalesce(nullif(btrim(shown), ''), session_user::text);
    RETURN NEW;
END
$$;

-- Adds a login role to a team (or moves it to another) under the name teammates see, for the
-- database owner: SELECT agent_memory.add_member('alice', 'core', 'Alice Liddell');
-- Without a name, a new member is shown by the role's name and a known one keeps theirs.
DROP FUNCTION agent_memory.add_member(name, text);
CREATE FUNCTION agent_memory.add_member(member_role name, member_team text,
                                        member_name text DEFAULT NULL) RETURNS void
    LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
    AS $$
BEGIN
    INSERT INTO agent_memory.members (role, team, display_name)
        VALUES (member_role, member_team, nullif(btrim(member_name), ''))
        ON CONFLICT (role) DO UPDATE
            SET team = excluded.team,
                display_name = coalesce(excluded.display_name, agent_memory.members.display_name);
    EXECUTE format('GRANT agent_memory_member TO %I', member_role);
END
$$;
REVOKE ALL ON FUNCTION agent_memory.add_member(name, text, text) FROM PUBLIC;
