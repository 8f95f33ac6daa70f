-- The second pass of the DerSimonian-Laird meta-analysis, once tau^2 is known: sums of the
-- random-effects weights w* = 1 / (1/w + tau^2) and of w* z over the window's sessions
-- with a usable per-session r on the report's scale (see sql/report_session_sums.sql).
SELECT SUM(1.0 / (1.0 / (q.answers - 3) + :tau2)) AS sw_star,
       SUM(atanh(q.r) / (1.0 / (q.answers - 3) + :tau2)) AS swz_star
FROM (
    SELECT st.answers,
           CASE WHEN st.answers >= 4 AND st.answer_sxx > 0 AND st.answer_syy > 0
                THEN st.answer_sxy / sqrt(st.answer_sxx * st.answer_syy) END AS r
    FROM report_window AS w
    JOIN session_stats AS st ON st.session_id = w.id
    WHERE st.scale_id = :scale_id AND st.usable > 0
) AS q
WHERE q.r IS NOT NULL AND abs(q.r) < 1
