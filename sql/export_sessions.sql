-- The envelopes of export's sessions, read beside sql/export_scores.sql in session id order
-- (council_db/outlets/export.py appends the session filters and ORDER BY s.id).
SELECT s.id, s.session_key, s.timestamp, s.consent_level, s.schema_version, s.schema_version_raw,
       s.council_config_version, s.query_hash, s.query_metadata
FROM sessions AS s
