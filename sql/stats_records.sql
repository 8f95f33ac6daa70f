-- The record-level totals of the sessions whose ids lie in a range (first_id, last_id), one scan of their
-- scores in primary-key order. The reviewers and models come back as comma-separated lists
-- of their distinct ids (the dialect's aggregate, filled in by store/contents.py), so the lists of
-- several id ranges, read at once, can be joined into one count.
SELECT COUNT(*) AS records,
       COALESCE(SUM(CASE WHEN self_review THEN 1 ELSE 0 END), 0) AS self_reviews,
       COALESCE(SUM(CASE WHEN display_order THEN 0 ELSE 1 END), 0) AS position_not_display_order,
       {reviewer_ids} AS reviewer_ids,
       {model_ids} AS model_ids
FROM scores
WHERE session_id BETWEEN :first_id AND :last_id
