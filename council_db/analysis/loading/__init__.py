"""Which sessions a report covers, and their scores as numpy arrays: the window (window),
its records (window_records into score_data), whole-window sums from the per-session
statistics (window_totals), and where the data is when a window holds none (empty_window)."""
