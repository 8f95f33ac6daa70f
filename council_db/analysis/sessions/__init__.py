"""Single sessions: the ones whose scores do not fit (anomalies), and one session's
indicators for `council-db audit` (session_audit)."""
