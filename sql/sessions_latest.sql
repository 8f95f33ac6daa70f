-- The latest sessions (by time; undated ones last), one summary row each. The dated and the
-- undated are each read through an index (ix_sessions_ts_us) up to the limit, so no query
-- sorts every session.
SELECT
    s.session_key AS session_id,
    s.timestamp,
    COUNT(*) AS records,
    COUNT(DISTINCT sc.reviewer_id) AS reviewers,
    COUNT(DISTINCT sc.model_id) AS candidates,
    AVG(CASE WHEN sc.exclusion_id IS NULL THEN sc.score_value END) AS mean_score,
    SUM(CASE WHEN sc.exclusion_id IS NULL THEN 0 ELSE 1 END) AS excluded,
    s.schema_version,
    s.council_config_version,
    s.category
FROM (
    SELECT * FROM (
        SELECT * FROM (SELECT * FROM sessions WHERE ts_us IS NOT NULL ORDER BY ts_us DESC, id DESC LIMIT :limit) AS dated
        UNION ALL
        SELECT * FROM (SELECT * FROM sessions WHERE ts_us IS NULL ORDER BY id DESC LIMIT :limit) AS undated
    ) AS latest
    ORDER BY CASE WHEN ts_us IS NULL THEN 1 ELSE 0 END, ts_us DESC, id DESC
    LIMIT :limit
) AS s
JOIN scores AS sc ON sc.session_id = s.id
GROUP BY s.id, s.session_key, s.timestamp, s.ts_us, s.schema_version, s.council_config_version, s.category
ORDER BY CASE WHEN s.ts_us IS NULL THEN 1 ELSE 0 END, s.ts_us DESC, s.id DESC
