-- The scores of the sessions in report_window (a CTE the caller puts in front), oldest
-- session first, with what the analyses need, as ids (analysis/loading/window_records.py looks the
-- names up once). Excluded scores come too, so they can be counted by reason (exclusion_id -1:
-- not excluded); slot is -1 where position is not a display slot (schema < 1.2.0). {style_key}
-- is ", sc.position" where the database holds answers' styles (answer_styles), whose key
-- (with the record's session, reviewer and model) finds a record's style; else nothing.
-- The score, exclusion and dimension placeholders are the record's score_value, its exclusion and nothing,
-- or, for one dimension of a rubric (--dimension: analysis/loading/window_records.py), that
-- dimension's score, judged against the record's scale alike, and the join that keeps only the
-- records that have it.
-- The reviewers and models parameters (expanding lists of names) keep only those scores,
-- unless all_reviewers / all_models is true; a reviewer named by its model keeps each of its
-- identities too (revision 0016: models.model_of). min_consent keeps the records whose own consent
-- level (their envelope's, where it differs from the session's) is at least that; 1 keeps all.
-- every_import false keeps only the records stored by imports started at or before imported_by
-- (--as-of: a later judge file adding records to these sessions is left out; a record's import_id is
-- NULL where it came with its session, which the window already judged).
-- A stored time outside min_us..max_us (years 0001-9999 UTC) cannot be read: it comes as -1.
-- The order is total and set by the records, never by row ids (which depend on the order
-- they were imported in): sessions by time, then key; a session's scores by position here,
-- then by reviewer and candidate name (analysis/loading/window_records.py). Sums then add up
-- in the same order on every store, backend and run: PostgreSQL, unlike SQLite, returns a
-- session's rows in any order.
SELECT
    sc.session_id,
    COALESCE(CASE WHEN s.ts_us BETWEEN :min_us AND :max_us THEN s.ts_us END, -1) AS ts_us,
    sc.reviewer_id,
    sc.model_id,
    CASE WHEN sc.display_order THEN sc.position ELSE -1 END AS slot,
    sc.response_length_chars,
    {score} AS score_value,
    sc.scale_id,
    {exclusion} AS exclusion_id{style_key}
FROM report_window AS w
JOIN sessions AS s ON s.id = w.id
JOIN scores AS sc ON sc.session_id = s.id{dimension}
WHERE (:all_reviewers OR sc.reviewer_id IN (SELECT m.id FROM models AS m WHERE m.name IN :reviewers OR m.model_of IN
                                                (SELECT b.id FROM models AS b WHERE b.name IN :reviewers)))
  AND (:all_models OR sc.model_id IN (SELECT m.id FROM models AS m WHERE m.name IN :models))
  AND (:min_consent <= 1 OR COALESCE((SELECT e.consent_level FROM record_envelopes AS e WHERE e.id = sc.envelope_id),
                                     s.consent_level) >= :min_consent)
  AND (:every_import OR sc.import_id IS NULL OR sc.import_id IN (SELECT i.id FROM imports AS i
                                                                  WHERE i.started_at <= :imported_by))
ORDER BY CASE WHEN s.ts_us IS NULL THEN 1 ELSE 0 END, s.ts_us, s.session_key, sc.position
