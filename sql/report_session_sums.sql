-- Whole-window sums for the bias report, per score scale, from session_stats (one short
-- row per session, kept at import time) for the sessions in report_window (a CTE the
-- caller puts in front). One pass over the window's sessions, never over their records:
-- counts and time span, llm-council's naive pooled r, the within-session length
-- correlation with its cluster-robust SE (council_db.stats.correlation.WithinSums), and
-- the fixed-effect meta-analysis of per-session Fisher z (council_db.stats.meta_analysis
-- .FisherZSums). The random-effects pass is sql/report_session_random_effects.sql.
SELECT
    ps.scale_id,
    scale.name AS scale,
    SUM(CASE WHEN ps.usable > 0 THEN 1 ELSE 0 END) AS sessions,
    SUM(CASE WHEN ps.usable > 0 AND ps.ts_us IS NULL THEN 1 ELSE 0 END) AS undated,
    MIN(CASE WHEN ps.usable > 0 THEN ps.ts_us END) AS start_us,
    MAX(CASE WHEN ps.usable > 0 THEN ps.ts_us END) AS end_us,
    SUM(ps.usable) AS usable,
    SUM(ps.answers) AS answers,
    SUM(ps.unscored) AS unscored,
    SUM(ps.out_of_scale) AS out_of_scale,
    -- naive pooled r over records: raw sums
    SUM(ps.length_sum) AS sx, SUM(ps.score_sum) AS sy,
    SUM(ps.length_sq_sum) AS sxx, SUM(ps.score_sq_sum) AS syy, SUM(ps.length_score_sum) AS sxy,
    -- within-session r: sessions with >= 2 answers, their moments and products of moments
    SUM(ps.within) AS g,
    SUM(ps.within * ps.answer_sxy) AS w_sxy,
    SUM(ps.within * ps.answer_sxx) AS w_sxx,
    SUM(ps.within * ps.answer_syy) AS w_syy,
    SUM(ps.within * ps.answer_sxy * ps.answer_sxy) AS w_sxy_sxy,
    SUM(ps.within * ps.answer_sxx * ps.answer_sxx) AS w_sxx_sxx,
    SUM(ps.within * ps.answer_syy * ps.answer_syy) AS w_syy_syy,
    SUM(ps.within * ps.answer_sxx * ps.answer_syy) AS w_sxx_syy,
    SUM(ps.within * ps.answer_sxy * ps.answer_sxx) AS w_sxy_sxx,
    SUM(ps.within * ps.answer_sxy * ps.answer_syy) AS w_sxy_syy,
    -- fixed-effect meta-analysis: sessions with a usable per-session r, w = answers - 3
    SUM(CASE WHEN ps.meta THEN 1 ELSE 0 END) AS k,
    SUM(CASE WHEN ps.meta THEN ps.answers - 3 END) AS sw,
    SUM(CASE WHEN ps.meta THEN (ps.answers - 3) * (ps.answers - 3) END) AS sw2,
    SUM(CASE WHEN ps.meta THEN (ps.answers - 3) * atanh(ps.r) END) AS swz,
    SUM(CASE WHEN ps.meta THEN (ps.answers - 3) * atanh(ps.r) * atanh(ps.r) END) AS swz2,
    SUM(CASE WHEN ps.usable > 0 AND ps.r IS NOT NULL AND ps.answers < 4 THEN 1 ELSE 0 END) AS too_few_answers,
    SUM(CASE WHEN ps.usable > 0 AND ps.r IS NOT NULL AND ps.answers >= 4 AND abs(ps.r) >= 1
             THEN 1 ELSE 0 END) AS perfect_correlation,
    SUM(CASE WHEN ps.usable > 0 AND ps.r IS NULL THEN 1 ELSE 0 END) AS no_correlation
FROM (
    SELECT q.*,
           CASE WHEN q.answers >= 2 THEN 1 ELSE 0 END AS within,
           (q.r IS NOT NULL AND q.answers >= 4 AND abs(q.r) < 1) AS meta
    FROM (
        SELECT st.*, s.ts_us,
               CASE WHEN st.answers >= 3 AND st.answer_sxx > 0 AND st.answer_syy > 0
                    THEN st.answer_sxy / sqrt(st.answer_sxx * st.answer_syy) END AS r
        FROM report_window AS w
        JOIN sessions AS s ON s.id = w.id
        JOIN session_stats AS st ON st.session_id = w.id
    ) AS q
) AS ps
JOIN scales AS scale ON scale.id = ps.scale_id
GROUP BY ps.scale_id, scale.name
