-- Per-session sufficient statistics: the rows session_stats holds for the sessions whose ids
-- lie in a range (first, last), one per session and score scale. The importer inserts them
-- in the same transaction as the scores (store/writer.py; migration 0004 built them for older
-- databases); council-db db check compares the table with them (store/derived.py). The report sums these rows
-- instead of reading every record, so a window of a million sessions costs one pass
-- over a million short rows (sql/report_session_sums.sql).
--
-- Record-level sums cover usable scores (not excluded) whose answer length is known
-- (known_lengths of them; -1 in response_length_chars is an unknown length), self-reviews
-- included, as llm-council's pooled length correlation counts them. The answer-level moments are the
-- within-session length analysis: an answer is (model, length) in a session, x its
-- ln(chars + 1), y the mean of its usable scores from other reviewers (self-reviews are
-- analysed apart); answer_sxx, answer_syy, answer_sxy are sums of squares and products
-- centred on the session's means (centred first, so no cancellation). answer_z is the
-- Fisher z of the session's answer-level r where the meta-analysis can use it (at least 4
-- answers, both varying, |r| < 1), else NULL: kept so a report need not evaluate it.
WITH answers AS (
    SELECT session_id, scale_id, ln(response_length_chars + 1.0) AS x, AVG(score_value) AS y
    FROM scores
    WHERE session_id BETWEEN :first AND :last AND exclusion_id IS NULL AND NOT self_review
      AND response_length_chars >= 0
    GROUP BY session_id, scale_id, model_id, response_length_chars
), centred AS (
    SELECT session_id, scale_id,
           x - AVG(x) OVER (PARTITION BY session_id, scale_id) AS dx,
           y - AVG(y) OVER (PARTITION BY session_id, scale_id) AS dy
    FROM answers
), answer_moments AS (
    SELECT session_id, scale_id, COUNT(*) AS answers,
           SUM(dx * dx) AS answer_sxx, SUM(dy * dy) AS answer_syy, SUM(dx * dy) AS answer_sxy
    FROM centred
    GROUP BY session_id, scale_id
), record_sums AS (
    SELECT session_id, scale_id,
           COUNT(*) AS records,
           SUM(CASE WHEN exclusion_id IS NULL THEN 1 ELSE 0 END) AS usable,
           SUM(CASE WHEN exclusion_id = 1 THEN 1 ELSE 0 END) AS unscored,
           SUM(CASE WHEN exclusion_id = 2 THEN 1 ELSE 0 END) AS out_of_scale,
           SUM(CASE WHEN exclusion_id IS NULL AND response_length_chars >= 0 THEN 1 ELSE 0 END) AS known_lengths,
           SUM(CASE WHEN exclusion_id IS NULL AND response_length_chars >= 0 THEN score_value ELSE 0 END) AS score_sum,
           SUM(CASE WHEN exclusion_id IS NULL AND response_length_chars >= 0
                    THEN score_value * score_value ELSE 0 END) AS score_sq_sum,
           SUM(CASE WHEN exclusion_id IS NULL AND response_length_chars >= 0
                    THEN response_length_chars ELSE 0 END) AS length_sum,
           SUM(CASE WHEN exclusion_id IS NULL AND response_length_chars >= 0
                    THEN 1.0 * response_length_chars * response_length_chars ELSE 0 END) AS length_sq_sum,
           SUM(CASE WHEN exclusion_id IS NULL AND response_length_chars >= 0
                    THEN response_length_chars * score_value ELSE 0 END) AS length_score_sum
    FROM scores
    WHERE session_id BETWEEN :first AND :last
    GROUP BY session_id, scale_id
)
SELECT r.session_id, r.scale_id, r.records, r.usable, r.unscored, r.out_of_scale, r.known_lengths,
       r.score_sum, r.score_sq_sum, r.length_sum, r.length_sq_sum, r.length_score_sum,
       COALESCE(a.answers, 0) AS answers, COALESCE(a.answer_sxx, 0) AS answer_sxx,
       COALESCE(a.answer_syy, 0) AS answer_syy, COALESCE(a.answer_sxy, 0) AS answer_sxy,
       CASE WHEN a.answers >= 4 AND a.answer_sxx > 0 AND a.answer_syy > 0
                 AND abs(a.answer_sxy) < sqrt(a.answer_sxx * a.answer_syy)
            THEN atanh(a.answer_sxy / sqrt(a.answer_sxx * a.answer_syy)) END AS answer_z
FROM record_sums AS r
LEFT JOIN answer_moments AS a ON a.session_id = r.session_id AND a.scale_id = r.scale_id
