"""Does anything change over time or by version? Trends on joint-model residuals (trends on
slope_fits, about subjects), steps (changepoints), a reviewer's severity now
(recent_severity), who judged when (panel), session means over time (session_means), and
drift by configuration or model snapshot (version_drift)."""
