-- A role that can only read council-db's tables and views, for `council-db sql --db-readonly URL`
-- (printed by `council-db db readonly-role`). Run it as a superuser or a role with CREATEROLE that
-- owns the database's tables, then give the role a password: \password {role}
-- Writing is impossible by privilege (SELECT is all it is granted); reading server files,
-- large objects and reloading the configuration need superuser or pg_read_server_files /
-- pg_write_server_files, which it does not have. Reads run READ ONLY by default too.
CREATE ROLE {role} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS;
ALTER ROLE {role} SET default_transaction_read_only = on;
GRANT CONNECT ON DATABASE {database} TO {role};
GRANT USAGE ON SCHEMA public TO {role};
GRANT SELECT ON ALL TABLES IN SCHEMA public TO {role};
-- Except {keys}: this database's key for rejected lines' hashes, which no read outlet shows.
-- Without the privilege no function reads it for the role either (table_to_xml, pg_stats, ...).
REVOKE ALL ON TABLE {keys} FROM {role};
-- Tables and views a later council-db migration creates (as {owner}) are readable too.
ALTER DEFAULT PRIVILEGES FOR ROLE {owner} IN SCHEMA public GRANT SELECT ON TABLES TO {role};
