-- Every stored record with what export needs to give back the line as imported.
-- Export's records with their names and envelopes joined, read as dicts (the copier, the
-- tests); council_db/outlets/export.py appends filters and ORDER BY. The order follows the
-- primary key of scores, so SQLite streams without sorting.
SELECT
    s.session_key,
    COALESCE(judge.name, reviewer.name) AS reviewer,
    reviewer.reviewer_kind,
    candidate.name AS model,
    sc.position,
    sc.display_order,
    sc.response_length_chars,
    sc.score_value,
    scale.name AS score_scale,
    COALESCE(e.timestamp, s.timestamp) AS timestamp,
    COALESCE(e.consent_level, s.consent_level) AS consent_level,
    COALESCE(e.schema_version, s.schema_version) AS schema_version,
    CASE WHEN e.id IS NULL THEN s.schema_version_raw ELSE e.schema_version_raw END AS schema_version_raw,
    CASE WHEN e.id IS NULL THEN s.council_config_version ELSE e.council_config_version END AS council_config_version,
    CASE WHEN e.id IS NULL THEN s.query_hash ELSE e.query_hash END AS query_hash,
    CASE WHEN e.id IS NULL THEN s.query_metadata ELSE e.query_metadata END AS query_metadata,
    st.response_tokens, st.markdown_headers, st.markdown_lists, st.markdown_bold,
    reviewer.prompt AS reviewer_prompt, reviewer.temperature AS reviewer_temperature, reviewer.seed AS reviewer_seed,
    sc.session_id AS key_session, sc.reviewer_id AS key_reviewer, sc.model_id AS key_model,
    sc.ts_us AS own_ts_us  -- the record's own time, in its timestamp's form (revision 0018)
FROM scores AS sc
JOIN sessions AS s ON s.id = sc.session_id
JOIN models AS reviewer ON reviewer.id = sc.reviewer_id
JOIN models AS candidate ON candidate.id = sc.model_id
LEFT JOIN models AS judge ON judge.id = reviewer.model_of  -- a reviewer with provenance: its model (revision 0016)
JOIN scales AS scale ON scale.id = sc.scale_id
LEFT JOIN record_envelopes AS e ON e.id = sc.envelope_id
LEFT JOIN answer_styles AS st ON st.session_id = sc.session_id AND st.reviewer_id = sc.reviewer_id
                             AND st.model_id = sc.model_id AND st.position = sc.position
