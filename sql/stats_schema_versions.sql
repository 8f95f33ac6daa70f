-- Sessions, records and excluded records per (normalised) schema version, summed from the
-- per-session statistics (one short row per session and scale) instead of the records.
SELECT s.schema_version, COUNT(DISTINCT s.id) AS sessions, SUM(ss.records) AS records,
       SUM(ss.unscored) AS unscored, SUM(ss.out_of_scale) AS out_of_scale
FROM session_stats AS ss JOIN sessions AS s ON s.id = ss.session_id
GROUP BY s.schema_version
ORDER BY s.schema_version
