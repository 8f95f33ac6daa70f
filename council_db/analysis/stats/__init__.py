"""Statistics for the bias report: pure functions, numpy arrays in, small result objects out.

Everything that needs a confidence interval treats sessions, not records, as the independent
units: cluster-robust standard errors by session, and bootstraps that resample whole
sessions. Modules: ``estimate`` (the result shape), ``tiers`` (ADR-018 confidence tiers),
``distributions`` (t, F, chi-square and normal, on ``special_functions``: council-db's own, as
importing scipy.special cost a report a quarter second), ``inference`` (t/normal tests,
Benjamini-Hochberg), ``bootstrap`` (session resampling),
``clustered`` (cluster-robust means), ``answers`` (one row per candidate answer),
``correlation`` (length-score correlations), ``meta_analysis`` (fixed/random effects),
``agreement`` (Krippendorff's alpha), ``verdict_tables`` (agreement, Cohen's kappa and
Kendall's tau-b of two raters' verdicts), ``linearized`` (delta-method CR1 intervals of
functions of per-cluster sums), ``slopes`` (contrasts of slopes, CR1), ``alt_test`` (the
alternative annotator test), ``prediction_powered`` (a mean from predictions on every session
and labels on some: PPI++), ``ranks`` (ranks over resamples).
"""

from council_db.analysis.stats.agreement import (
    Agreement,
    Repeats,
    answer_agreement,
    krippendorff_alpha_interval,
    retest,
)
from council_db.analysis.stats.answers import AnswerTable, answer_index, tabulate_answers, within_session_pairs
from council_db.analysis.stats.bootstrap import (
    as_generator,
    expanded_tail,
    percentile_interval,
    resampled_sums,
    session_weights,
)
from council_db.analysis.stats.clustered import (
    clustered_mean,
    clustered_mean_from_totals,
    clustered_share,
    mean_figure,
    mean_figure_from_totals,
)
from council_db.analysis.stats.correlation import (
    SessionMoments,
    correlation_p_value,
    mean_fisher_z_r,
    per_session_correlations,
    per_session_r,
    pooled_r_over_records,
    session_moments,
    within_session_correlation,
    within_session_correlation_from_moments,
)
from council_db.analysis.stats.estimate import Estimate
from council_db.analysis.stats.inference import (
    benjamini_hochberg,
    chi2_sf,
    normal_p_value,
    normal_quantile,
    t_interval,
    t_p_value,
    t_quantile,
)
from council_db.analysis.stats.meta_analysis import MetaAnalysis, meta_analysis
from council_db.analysis.stats.ranks import ranks_of_rows
from council_db.analysis.stats.tiers import TIERS, confidence_tier

__all__ = [
    "Agreement",
    "AnswerTable",
    "Estimate",
    "MetaAnalysis",
    "Repeats",
    "SessionMoments",
    "TIERS",
    "answer_agreement",
    "answer_index",
    "as_generator",
    "benjamini_hochberg",
    "chi2_sf",
    "expanded_tail",
    "clustered_mean",
    "clustered_mean_from_totals",
    "clustered_share",
    "mean_figure",
    "mean_figure_from_totals",
    "confidence_tier",
    "correlation_p_value",
    "krippendorff_alpha_interval",
    "mean_fisher_z_r",
    "meta_analysis",
    "normal_p_value",
    "normal_quantile",
    "per_session_correlations",
    "per_session_r",
    "percentile_interval",
    "pooled_r_over_records",
    "ranks_of_rows",
    "retest",
    "resampled_sums",
    "session_moments",
    "session_weights",
    "t_interval",
    "t_p_value",
    "t_quantile",
    "tabulate_answers",
    "within_session_correlation",
    "within_session_pairs",
    "within_session_correlation_from_moments",
]
