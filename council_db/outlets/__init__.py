"""Where records and figures leave the database: export (JSONL/CSV), copier (into another
database, e.g. a team's PostgreSQL), push (session summaries to a telemetry service through
an outbox, built by push_events), readonly_sql and sql_guard (`council-db sql`), and the
Datasette metadata. Stands on every layer below the CLI."""
