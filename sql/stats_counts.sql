-- One row of the session-level totals over everything stored (the record-level ones are
-- sql/stats_records.sql's); the window spans the times that can be read (min_us..max_us:
-- years 0001-9999 UTC); a session with any other is counted apart.
SELECT
    (SELECT COUNT(*) FROM sessions) AS sessions,
    (SELECT MIN(ts_us) FROM sessions WHERE ts_us BETWEEN :min_us AND :max_us) AS first_us,
    (SELECT MAX(ts_us) FROM sessions WHERE ts_us BETWEEN :min_us AND :max_us) AS last_us,
    (SELECT COUNT(*) FROM sessions WHERE ts_us IS NULL) AS sessions_without_timestamp,
    (SELECT COUNT(*) FROM sessions WHERE ts_us < :min_us OR ts_us > :max_us) AS sessions_with_unreadable_timestamp,
    (SELECT COUNT(*) FROM imports) AS imports,
    (SELECT COUNT(*) FROM rejected_lines) AS rejected_lines
