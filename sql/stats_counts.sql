-- One row of totals over everything stored. The record-level figures come from one scan of
-- scores; the window spans the times that can be read (min_us..max_us: years 0001-9999
-- UTC); a session with any other is counted apart.
WITH record_totals AS (
    SELECT COUNT(*) AS records,
           COUNT(DISTINCT reviewer_id) AS reviewers,
           COUNT(DISTINCT model_id) AS models,
           COALESCE(SUM(CASE WHEN self_review THEN 1 ELSE 0 END), 0) AS self_reviews,
           COALESCE(SUM(CASE WHEN display_order THEN 0 ELSE 1 END), 0) AS position_not_display_order
    FROM scores
)
SELECT
    r.records,
    (SELECT COUNT(*) FROM sessions) AS sessions,
    r.reviewers,
    r.models,
    r.self_reviews,
    r.position_not_display_order,
    (SELECT MIN(ts_us) FROM sessions WHERE ts_us BETWEEN :min_us AND :max_us) AS first_us,
    (SELECT MAX(ts_us) FROM sessions WHERE ts_us BETWEEN :min_us AND :max_us) AS last_us,
    (SELECT COUNT(*) FROM sessions WHERE ts_us IS NULL) AS sessions_without_timestamp,
    (SELECT COUNT(*) FROM sessions WHERE ts_us < :min_us OR ts_us > :max_us) AS sessions_with_unreadable_timestamp,
    (SELECT COUNT(*) FROM imports) AS imports,
    (SELECT COUNT(*) FROM rejected_lines) AS rejected_lines
FROM record_totals AS r
