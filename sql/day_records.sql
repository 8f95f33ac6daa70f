-- The usable records of the days in a range (first, last), grouped once by every column any day
-- totals table keys on or sums apart (store/day_screen.py): each table's rows but ``sessions``
-- are sums (and extremes) of these groups, so ``council-db db check`` sorts the records once
-- instead of once per table. The days as in sql/day_totals.sql; slot is the position where it
-- is a display slot, -1 elsewhere.
WITH d AS (
    SELECT id, (ts_us + 62135596800000000) / 86400000000 + 1 AS day FROM sessions
    WHERE ts_us >= (:first - 1) * 86400000000 - 62135596800000000
      AND ts_us < :last * 86400000000 - 62135596800000000
    UNION ALL
    SELECT id, 0 AS day FROM sessions WHERE ts_us IS NULL AND :first <= 0 AND 0 <= :last
)
SELECT d.day, sc.reviewer_id, sc.model_id, sc.scale_id,
       CASE WHEN sc.display_order THEN sc.position ELSE -1 END AS slot,
       CASE WHEN sc.self_review THEN 1 ELSE 0 END AS self_review,
       CASE WHEN sc.response_length_chars >= 0 THEN 1 ELSE 0 END AS known,
       COUNT(*) AS records, SUM(sc.score_value) AS score_sum, SUM(sc.score_value * sc.score_value) AS score_sq_sum,
       SUM(CASE WHEN sc.response_length_chars >= 0 THEN sc.response_length_chars ELSE 0 END) AS length_sum,
       MIN(sc.score_value) AS min_score, MAX(sc.score_value) AS max_score
FROM d JOIN scores AS sc ON sc.session_id = d.id
WHERE sc.exclusion_id IS NULL
GROUP BY 1, 2, 3, 4, 5, 6, 7
