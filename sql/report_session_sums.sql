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
SELECT
    SUM(CASE WHEN st.usable > 0 THEN 1 ELSE 0 END) AS sessions,
    SUM(CASE WHEN st.usable > 0 AND w.ts_us IS NULL THEN 1 ELSE 0 END) AS undated,
    MIN(CASE WHEN st.usable > 0 THEN w.ts_us END) AS start_us,
    MAX(CASE WHEN st.usable > 0 THEN w.ts_us END) AS end_us,
    SUM(st.usable) AS usable,
    SUM(st.answers) AS answers,
    SUM(st.unscored) AS unscored,
    SUM(st.out_of_scale) AS out_of_scale,
    -- naive pooled r over the records whose answer length is known: raw sums
    SUM(st.known_lengths) AS known_lengths,
    SUM(CASE WHEN st.known_lengths > 0 THEN 1 ELSE 0 END) AS sized_sessions,
    SUM(st.length_sum) AS sx, SUM(st.score_sum) AS sy,
    SUM(st.length_sq_sum) AS sxx, SUM(st.score_sq_sum) AS syy, SUM(st.length_score_sum) AS sxy,
    -- within-session r: sessions with >= 2 answers, their moments and products of moments
    SUM(CASE WHEN st.answers >= 2 THEN 1 ELSE 0 END) AS g,
    SUM(st.answer_sxy) AS w_sxy,
    SUM(st.answer_sxx) AS w_sxx,
    SUM(st.answer_syy) AS w_syy,
    SUM(st.answer_sxy * st.answer_sxy) AS w_sxy_sxy,
    SUM(st.answer_sxx * st.answer_sxx) AS w_sxx_sxx,
    SUM(st.answer_syy * st.answer_syy) AS w_syy_syy,
    SUM(st.answer_sxx * st.answer_syy) AS w_sxx_syy,
    SUM(st.answer_sxy * st.answer_sxx) AS w_sxy_sxx,
    SUM(st.answer_sxy * st.answer_syy) AS w_sxy_syy,
    -- fixed-effect meta-analysis: w = answers - 3 over sessions with a usable Fisher z
    COUNT(st.answer_z) AS k,
    SUM(st.answers - 3 + 0 * st.answer_z) AS sw,
    SUM((st.answers - 3) * (st.answers - 3) + 0 * st.answer_z) AS sw2,
    SUM((st.answers - 3) * st.answer_z) AS swz,
    SUM((st.answers - 3) * st.answer_z * st.answer_z) AS swz2,
    -- why the other sessions are left out of the meta-analysis
    SUM(CASE WHEN st.usable > 0 AND (st.answers < 3 OR st.answer_sxx <= 0 OR st.answer_syy <= 0)
             THEN 1 ELSE 0 END) AS no_correlation,
    SUM(CASE WHEN st.answers = 3 AND st.answer_sxx > 0 AND st.answer_syy > 0 THEN 1 ELSE 0 END) AS too_few_answers,
    SUM(CASE WHEN st.answers >= 4 AND st.answer_sxx > 0 AND st.answer_syy > 0 AND st.answer_z IS NULL
             THEN 1 ELSE 0 END) AS perfect_correlation
FROM report_window AS w
JOIN session_stats AS st ON st.session_id = w.id
WHERE st.scale_id = :scale_id AND st.session_id BETWEEN :first_id AND :last_id
