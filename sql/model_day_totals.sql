-- Day totals (store/day_totals.py): the rows model_day_totals holds for the days in a range
-- (first, last): per candidate model and score scale, the usable scores it got (sessions: those
-- with at least one of them; its own self-reviews among them). A day is the session's UTC date as
-- a day number, 1 = 0001-01-01 (the earliest time stored), 0 for a session without a time; ts_us
-- is UTC microseconds, so the integer arithmetic below gives the day on both databases. The
-- importer adds each batch's part in its transaction (numpy: store/day_totals.py; migration 0009
-- built them for older databases); council-db db check compares the table with these rows
-- (store/derived.py).
WITH d AS (
    SELECT id, (ts_us + 62135596800000000) / 86400000000 + 1 AS day FROM sessions
    WHERE ts_us >= (:first - 1) * 86400000000 - 62135596800000000
      AND ts_us < :last * 86400000000 - 62135596800000000
    UNION ALL
    SELECT id, 0 AS day FROM sessions WHERE ts_us IS NULL AND :first <= 0 AND 0 <= :last
)
SELECT d.day, sc.model_id, sc.scale_id, COUNT(DISTINCT sc.session_id) AS sessions, COUNT(*) AS records,
       SUM(CASE WHEN sc.self_review THEN 1 ELSE 0 END) AS self_reviews,
       SUM(CASE WHEN sc.response_length_chars >= 0 THEN 1 ELSE 0 END) AS known_lengths,
       SUM(sc.score_value) AS score_sum, SUM(sc.score_value * sc.score_value) AS score_sq_sum,
       SUM(CASE WHEN sc.self_review THEN sc.score_value ELSE 0 END) AS self_score_sum,
       SUM(CASE WHEN sc.response_length_chars >= 0 THEN sc.response_length_chars ELSE 0 END) AS length_sum
FROM d JOIN scores AS sc ON sc.session_id = d.id
WHERE sc.exclusion_id IS NULL
GROUP BY d.day, sc.model_id, sc.scale_id
