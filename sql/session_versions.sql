-- The council_config_version of every session in report_window (a CTE the caller puts in
-- front), for comparing reviewers across council configurations.
SELECT s.session_key, s.council_config_version
FROM report_window AS w
JOIN sessions AS s ON s.id = w.id
