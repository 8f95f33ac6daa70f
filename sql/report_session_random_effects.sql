-- The second pass of the DerSimonian-Laird meta-analysis, once tau^2 is known: sums of the
-- random-effects weights w* = 1 / (1/w + tau^2), w = answers - 3, and of w* z over the
-- window's sessions on one scale with a usable Fisher z (see sql/report_session_sums.sql,
-- whose rows placeholder it shares).
SELECT SUM(1.0 / (1.0 / (st.answers - 3) + :tau2)) AS sw_star,
       SUM(st.answer_z / (1.0 / (st.answers - 3) + :tau2)) AS swz_star
FROM {rows}
WHERE st.scale_id = :scale_id AND st.answer_z IS NOT NULL
