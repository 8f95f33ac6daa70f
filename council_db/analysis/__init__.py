"""What the scores say. A window of sessions is chosen and loaded as numpy arrays (window,
score_data, with whole-window totals from the per-session statistics in window_totals); the
joint model (joint_model on joint_design and least_squares) separates reviewer severity,
candidate quality, display slot, length and self-preference; the other analyses (length,
agreement, position, trends, changepoints, anomalies, affinity, version_drift,
session_audit, session_means, aggregation/ for the calibrated view) work on the same arrays
or on the joint model's residuals. stats/ holds the pure estimators, arrays in."""
