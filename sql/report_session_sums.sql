-- Whole-window sums for the bias report on one score scale (scale_id), from session_stats
-- (one short row per session, kept at import time) for the sessions in report_window (a
-- CTE of id and ts_us the caller puts in front). One pass over the window's sessions, never
-- over their records: counts and time span, llm-council's naive pooled r, the
-- within-session length correlation with its cluster-robust SE
-- (council_db.stats.correlation.WithinSums) and the fixed-effect meta-analysis of
-- per-session Fisher z (council_db.stats.meta_analysis.FisherZSums); the random-effects
-- pass is sql/report_session_random_effects.sql.
--
-- Kept lean because it runs over a million rows: a session with fewer than 2 answers has
-- zero centred sums, so the within-session sums need no condition; answer_z is NULL where
-- the meta-analysis cannot use a session, so "+ 0 * answer_z" drops those rows from a SUM.
-- One query per scale rather than GROUP BY scale, which would sort the rows. Each call sums
-- the sessions whose id is in first_id..last_id: a window's id range is cut into parts that
-- run at once (council_db.analysis.loading.window_totals), each part's sums then added up.
-- The correlation_sums placeholder is sql/report_correlation_sums.sql (with its leading comma), or nothing
-- where only the counts are wanted (council-db check: no rule reads the length correlations,
-- and their sums double the time of this pass over a million sessions).
-- The rows placeholder is the window's sessions joined to their statistics ("report_window
-- AS w JOIN session_stats AS st ON st.session_id = w.id", with span_sums: the time span's
-- columns of sql/report_span_sums.sql), or, for a window of every session, "session_stats AS
-- st" alone: the same rows in the same order, without a lookup per session (a quarter of
-- this pass at 1M sessions), the span then read through the time index
-- (sql/report_window_span.sql).
SELECT
    SUM(CASE WHEN st.usable > 0 THEN 1 ELSE 0 END) AS sessions{span_sums},
    SUM(st.usable) AS usable,
    SUM(st.answers) AS answers,
    SUM(st.unscored) AS unscored,
    SUM(st.out_of_scale) AS out_of_scale,
    -- the records whose answer length is known, and their sessions
    SUM(st.known_lengths) AS known_lengths,
    SUM(CASE WHEN st.known_lengths > 0 THEN 1 ELSE 0 END) AS sized_sessions{correlation_sums}
FROM {rows}
WHERE st.scale_id = :scale_id AND st.session_id BETWEEN :first_id AND :last_id
