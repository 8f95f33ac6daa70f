-- Export's records as ids and numbers; names, scales and envelopes are looked up once each
-- (council_db/outlets/export.py). Filters and ORDER BY are appended there; the order
-- follows the primary key of scores, so SQLite streams without sorting. ``styled`` is NULL for a
-- record without a style row (answer_styles: the usual record), whose line then fits its frame.
-- ts_us is the record's own time where that is all its envelope differs in (revision 0018).
SELECT sc.session_id, sc.reviewer_id, sc.model_id, sc.position, sc.display_order,
       sc.response_length_chars, sc.score_value, sc.scale_id, sc.envelope_id,
       st.session_id AS styled, st.response_tokens, st.markdown_headers, st.markdown_lists, st.markdown_bold,
       sc.ts_us
FROM scores AS sc
JOIN sessions AS s ON s.id = sc.session_id
LEFT JOIN record_envelopes AS e ON e.id = sc.envelope_id
LEFT JOIN answer_styles AS st ON st.session_id = sc.session_id AND st.reviewer_id = sc.reviewer_id
                             AND st.model_id = sc.model_id AND st.position = sc.position
