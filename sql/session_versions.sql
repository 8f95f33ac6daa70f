-- The council_config_version of the sessions whose keys are given (an expanding list
-- parameter), for comparing reviewers across council configurations.
SELECT s.session_key, s.council_config_version
FROM sessions AS s
WHERE s.session_key IN :keys
