-- The records an audit bundle fingerprints (store/fingerprint.py): every score of the sessions in
-- report_window (a CTE the caller puts in front) by the reviewers and of the models the report
-- reads (the reviewers and models parameters as in report_records.sql), excluded ones too, with
-- each stored column as a number (NULL as -1) and the import that stored it (its session's before
-- revision 0013); with every_import false, only what imports started at or before imported_by stored
-- (report_records.sql: --as-of). In the scores table's own key order, so nothing is sorted: the digest is this
-- database's, compared with itself later (verify), not with another store's ids.
SELECT
    sc.session_id,
    sc.reviewer_id,
    sc.model_id,
    sc.position,
    sc.response_length_chars,
    COALESCE(sc.score_value, -1) AS score_value,
    CASE WHEN sc.score_value IS NULL THEN 1 ELSE 0 END AS unscored,
    sc.scale_id,
    CASE WHEN sc.display_order THEN 1 ELSE 0 END AS display_order,
    CASE WHEN sc.self_review THEN 1 ELSE 0 END AS self_review,
    COALESCE(sc.exclusion_id, -1) AS exclusion_id,
    COALESCE(sc.envelope_id, -1) AS envelope_id,
    COALESCE(sc.import_id, s.import_id, -1) AS import_id
FROM report_window AS w
JOIN sessions AS s ON s.id = w.id
JOIN scores AS sc ON sc.session_id = s.id
WHERE (:all_reviewers OR sc.reviewer_id IN (SELECT m.id FROM models AS m WHERE m.name IN :reviewers OR m.model_of IN
                                                (SELECT b.id FROM models AS b WHERE b.name IN :reviewers)))
  AND (:all_models OR sc.model_id IN (SELECT m.id FROM models AS m WHERE m.name IN :models))
  AND (:every_import OR sc.import_id IS NULL OR sc.import_id IN (SELECT i.id FROM imports AS i
                                                                  WHERE i.started_at <= :imported_by))
ORDER BY sc.session_id, sc.reviewer_id, sc.model_id, sc.position
