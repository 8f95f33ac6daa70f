"""What the scores say, one sub-package per question (docs/architecture.md):
loading/ (which sessions, as numpy arrays), joint/ (the joint model that separates reviewer
severity, candidate quality, display slot, length and self-preference), position/ (does the
slot an answer was shown in sway its score), effects/ (length, affinity, agreement between
reviewers), drift/ (does anything change over time or by version), sessions/ (which
sessions do not fit; one session's indicators), aggregation/ (the calibrated view).
stats/ holds the pure estimators, arrays in."""
