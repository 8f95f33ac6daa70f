-- The council_config_version and query_hash of the sessions whose keys are given (an expanding
-- list parameter): `council-db diff --config-version` pairs the same query's answers across versions.
SELECT s.session_key, s.council_config_version, s.query_hash
FROM sessions AS s
WHERE s.session_key IN :keys
