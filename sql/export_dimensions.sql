-- The named scores (score_dimensions) of export's records, in export's record order and each
-- record's dimensions in the order their names were first stored: council_db/outlets/export.py
-- appends the records' filters and its ORDER BY, and merges these rows into the records'.
SELECT d.session_id, d.reviewer_id, d.model_id, d.position, name.name, d.score
FROM score_dimensions AS d
JOIN dimension_names AS name ON name.id = d.dimension_id
JOIN scores AS sc ON sc.session_id = d.session_id AND sc.reviewer_id = d.reviewer_id AND sc.model_id = d.model_id
                 AND sc.position = d.position
JOIN sessions AS s ON s.id = sc.session_id
LEFT JOIN record_envelopes AS e ON e.id = sc.envelope_id
