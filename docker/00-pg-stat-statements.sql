-- The suite reads SQL statements per request from pg_stat_statements (SPEC §5); the library
-- is preloaded by docker-compose.yml's `command`, the extension created here.
CREATE EXTENSION IF NOT EXISTS pg_stat_statements;
