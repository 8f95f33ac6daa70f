"""The database: engines and their connection settings (database), the schema as Alembic
builds it (models, migrate), where the file lives (location), writing records (writer) with
the per-session statistics kept beside them (session_stats), backups, and what is stored
(contents). Stands on contract/ only."""
