-- Sessions and records per (normalised) schema version.
SELECT s.schema_version, COUNT(DISTINCT s.id) AS sessions, COUNT(*) AS records
FROM scores AS sc JOIN sessions AS s ON s.id = sc.session_id
GROUP BY s.schema_version
ORDER BY s.schema_version
