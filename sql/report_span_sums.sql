-- The time span's columns of sql/report_session_sums.sql, put in its span_sums placeholder
-- (with the leading comma) where it joins the window's sessions: their undated sessions and
-- first and last times, among those with a usable score on the scale.
,
    SUM(CASE WHEN st.usable > 0 AND w.ts_us IS NULL THEN 1 ELSE 0 END) AS undated,
    MIN(CASE WHEN st.usable > 0 THEN w.ts_us END) AS start_us,
    MAX(CASE WHEN st.usable > 0 THEN w.ts_us END) AS end_us
