-- The length correlations' sums of sql/report_session_sums.sql, put in its correlation_sums
-- placeholder after its counts (so with a leading comma): llm-council's naive pooled r
-- over the records whose answer length is known (raw sums), the within-session r and the
-- fixed-effect meta-analysis of per-session Fisher z.
,
    -- naive pooled r: raw sums
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
