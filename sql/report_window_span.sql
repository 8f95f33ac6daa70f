-- The span of a window of every session (sql/report_session_sums.sql without the join) on
-- one scale (scale_id): its undated sessions and first and last times, among the sessions
-- with a usable score on the scale. Read through ix_sessions_ts_us from either end, so it
-- costs a few index steps, not a pass over the sessions. The caller takes this path only
-- where no session's stored time is unreadable, so every non-NULL time is in the window.
SELECT
    (SELECT COUNT(*) FROM sessions AS s CROSS JOIN session_stats AS st
     WHERE s.ts_us IS NULL AND st.session_id = s.id AND st.scale_id = :scale_id AND st.usable > 0) AS undated,
    (SELECT s.ts_us FROM sessions AS s CROSS JOIN session_stats AS st
     WHERE s.ts_us IS NOT NULL AND st.session_id = s.id AND st.scale_id = :scale_id AND st.usable > 0
     ORDER BY s.ts_us LIMIT 1) AS start_us,
    (SELECT s.ts_us FROM sessions AS s CROSS JOIN session_stats AS st
     WHERE s.ts_us IS NOT NULL AND st.session_id = s.id AND st.scale_id = :scale_id AND st.usable > 0
     ORDER BY s.ts_us DESC LIMIT 1) AS end_us
