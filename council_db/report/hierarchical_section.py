"""The report's ``hierarchical`` part from a window's scores: the hierarchical fit's figures
with the sessions and records each rests on, and its flags. A flag needs its statement's
posterior probability P high for the whole family of statements, as the frequentist flags
need their q: Benjamini-Hochberg over 2 x (1 - P). Partial pooling already shrinks the
severities toward each other (Gelman, Hill & Yajima 2012), but the panel's slot, length and
self-preference effects have flat priors, and with P > 0.975 alone one null set of 20
sessions in three flagged one of its ten statements."""

from __future__ import annotations

import math

import numpy as np

from council_db.analysis.hierarchical import hierarchical_model
from council_db.analysis.hierarchical.posterior import PosteriorEffect
from council_db.analysis.loading.score_data import ScoreData
from council_db.analysis.stats.inference import benjamini_hochberg
from council_db.report.contract_base import Tier
from council_db.report.hierarchical_model import (
    FDR,
    BayesFlag,
    Hierarchical,
    ModelPosterior,
    Posterior,
    ReviewerPosterior,
    SeverityPath,
    SlotPosterior,
    Spread,
)
from council_db.report.model import BiasReport

METHOD = ("hierarchical joint model: reviewer, candidate and each reviewer's slot, length and self-preference "
          "effects drawn from populations whose spreads REML estimates; posteriors by empirical Bayes")
FLAG_RULE = ("Benjamini-Hochberg q <= 0.05 over 2 x (1 - P) of every statement, P its posterior probability "
             "(a statement alone: P > 0.975); position is one statement, the slots differ, entered as 1 - P, "
             "P = 1 - Box-Tiao's tail of all slots equal")
# kind -> (statement when the effect is above 0, when below)
STATEMENTS = {"reviewer_severity": ("generous", "harsh"),
              "position": ("scores higher than the average slot", "scores lower than the average slot"),
              "verbosity": ("longer answers score higher", "longer answers score lower"),
              "self_preference": ("reviewers prefer their own answers", "reviewers score their own answers lower")}


class _Counts:
    """Records and sessions of the fit, overall or of one reviewer or candidate."""

    def __init__(self, data: ScoreData, rows: np.ndarray) -> None:
        self.session = data.session[rows]
        self.reviewer = data.reviewer[rows]
        self.model = data.model[rows]

    def of(self, mask: np.ndarray | None = None) -> tuple[int, int]:
        sessions = self.session if mask is None else self.session[mask]
        return len(sessions), len(np.unique(sessions))


def _posterior(effect: PosteriorEffect | None, counts: tuple[int, int], tier: Tier, cls=Posterior, **extra):
    if effect is None or not math.isfinite(effect.mean):
        return None
    records, sessions = counts
    return cls(estimate=effect.mean, ci_low=effect.ci_low, ci_high=effect.ci_high, n_sessions=sessions,
               n_records=records, confidence=tier, posterior_sd=effect.sd, p_positive=effect.p_positive, **extra)


def _path(path) -> SeverityPath | None:
    if path is None:
        return None

    def clean(values: list[float]) -> list[float | None]:
        return [value if math.isfinite(value) else None for value in values]

    return SeverityPath(sessions=path.sessions, estimate=clean(path.means), ci_low=clean(path.ci_low),
                        ci_high=clean(path.ci_high))


def hierarchical(data: ScoreData, tier: Tier) -> Hierarchical | None:
    """The part, or None when the window is too thin to fit (the joint model's warnings say why)."""
    fit = hierarchical_model.fit(data)
    if fit is None:
        return None
    counts = _Counts(data, fit.rows)
    everything = counts.of()
    reviewers = []
    for name, code in sorted((name, data.reviewers.index(name)) for name in
                             {*fit.severity, *fit.slot_by_reviewer, *fit.length_by_reviewer, *fit.self_by_reviewer}):
        own = counts.of(counts.reviewer == code)
        path = fit.severity_paths.get(name)
        reviewers.append(ReviewerPosterior(
            reviewer_id=name, severity=_posterior(fit.severity.get(name), own, tier),
            slot_effects=[_posterior(e, own, tier, SlotPosterior, position=s)
                          for s, e in fit.slot_by_reviewer.get(name, {}).items()],
            length=_posterior(fit.length_by_reviewer.get(name), own, tier),
            self_preference=_posterior(fit.self_by_reviewer.get(name), own, tier),
            stable_since=path.stable_since if path else None, severity_path=_path(path)))
    models = [ModelPosterior(model_id=name, quality=_posterior(
        e, counts.of(counts.model == data.models.index(name)), tier)) for name, e in sorted(fit.quality.items())]
    position = [_posterior(e, everything, tier, SlotPosterior, position=s) for s, e in fit.slot_effects.items()]
    length = _posterior(fit.length_per_sd, everything, tier)
    self_preference = _posterior(fit.self_preference, everything, tier)
    return Hierarchical(
        method=METHOD, flag_rule=FLAG_RULE,
        prior=[Spread(component=name, sd=spread.sd if math.isfinite(spread.sd) else None, n=spread.n)
               for name, spread in fit.spreads.items()],
        residual_sd=fit.sigma, reviewers=reviewers, models=models, position=position, length=length,
        self_preference=self_preference,
        flags=_flags(reviewers, position, fit.slots_differ_tail, length, self_preference), warnings=fit.warnings)


def _flags(reviewers: list[ReviewerPosterior], position: list[SlotPosterior], slots_tail: float,
           length: Posterior | None, self_preference: Posterior | None) -> list[BayesFlag]:
    """Each statement with its posterior probability P and its tail; flagged where
    Benjamini-Hochberg over the tails gives q <= 0.05. A sign's tail is 2 x (1 - P) (P > 0.975
    for a statement alone). Position is one statement, "the slots differ", as the report's
    test of all slots equal is (a statement per slot made nulls of 20 sessions flag 5%), its
    tail Box-Tiao's, naming the slot that leads as the report does."""
    signs = [(kind, subject, metric) for kind, subject, metric in
             [("reviewer_severity", r.reviewer_id, r.severity) for r in reviewers]
             + [("verbosity", "length", length), ("self_preference", "pooled over reviewers", self_preference)]
             if metric is not None]
    # (kind, subject, statement, metric, P, tail)
    candidates = [(kind, subject, STATEMENTS[kind][metric.p_positive <= 0.5], metric, p, min(2.0 * (1.0 - p), 1.0))
                  for kind, subject, metric in signs for p in [max(metric.p_positive, 1.0 - metric.p_positive)]]
    if position and math.isfinite(slots_tail):
        lead = max(position, key=lambda s: abs(s.estimate))
        statement = f"differ; slot {lead.position} leads and {STATEMENTS['position'][lead.estimate < 0]}"
        candidates.append(("position", "display slots", statement, lead, 1.0 - slots_tail, slots_tail))
    if not candidates:
        return []
    q = benjamini_hochberg(np.array([tail for *_, tail in candidates]))
    return [BayesFlag(kind=kind, subject=subject, statement=statement, probability=p, q_value=q_value, metric=metric)
            for (kind, subject, statement, metric, p, _), q_value in zip(candidates, q.tolist()) if q_value <= FDR]


def add_to(report: BiasReport, data: ScoreData) -> None:
    """``report.hierarchical`` from the scores it was built on (its sample, on a large window);
    nothing below the 10 sessions every figure needs, a warning where the fit has too little."""
    if report.confidence == "insufficient":
        return
    part = hierarchical(data, report.confidence)
    if part is None:
        report.warnings.append("hierarchical model: too little data (need two sessions with two or more scores)")
    else:
        report.hierarchical = part
        report.warnings.extend(part.warnings)
