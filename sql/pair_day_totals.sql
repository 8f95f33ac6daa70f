-- Day totals (store/day_totals.py): the rows pair_day_totals holds for the days in a range (first,
-- last): per reviewer, candidate model and score scale, the usable scores that reviewer gave that
-- candidate. A day is the session's UTC date as a day number, 1 = 0001-01-01 (the earliest time
-- stored), 0 for a session without a time; ts_us is UTC microseconds, so the integer arithmetic
-- below gives the day on both databases. The importer adds each batch's part in its transaction
-- (numpy: store/day_totals.py; migration 0010 built them for older databases); council-db db check
-- compares the table with these rows (store/derived.py).
WITH d AS (
    SELECT id, (ts_us + 62135596800000000) / 86400000000 + 1 AS day FROM sessions
    WHERE ts_us >= (:first - 1) * 86400000000 - 62135596800000000
      AND ts_us < :last * 86400000000 - 62135596800000000
    UNION ALL
    SELECT id, 0 AS day FROM sessions WHERE ts_us IS NULL AND :first <= 0 AND 0 <= :last
)
SELECT d.day, sc.reviewer_id, sc.model_id, sc.scale_id, COUNT(*) AS records
FROM d JOIN scores AS sc ON sc.session_id = d.id
WHERE sc.exclusion_id IS NULL
GROUP BY d.day, sc.reviewer_id, sc.model_id, sc.scale_id
