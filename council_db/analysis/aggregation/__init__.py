"""The calibrated view: consensus scores per candidate answer (ADR 0017's aggregation
strategies) and a leaderboard of models over a window. Analytics only: stored scores are
read, never changed. Modules: ``strategies`` (the five methods), ``calibration`` (weights,
offsets and per-reviewer scales: given or estimated), ``leaderboard`` (ranking with
session-bootstrap CIs), ``quality`` (the joint model's), ``calibrated_by_people`` (on the
human or gold raters' scale, prediction-powered)."""

from council_db.analysis.aggregation.calibration import calibrate, check_reviewers, parse_pairs, read_config
from council_db.analysis.aggregation.leaderboard import Standing, leaderboard
from council_db.analysis.aggregation.strategies import Calibration, Consensus, Method, consensus

__all__ = [
    "Calibration",
    "Consensus",
    "Method",
    "Standing",
    "calibrate",
    "check_reviewers",
    "consensus",
    "leaderboard",
    "parse_pairs",
    "read_config",
]
