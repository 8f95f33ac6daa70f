"""The report on designs that fix each reviewer's total in a session (pairwise verdicts,
rankings): the effects that live only in those totals are said to be not identified, in the
JSON (``not_identified``, each reviewer's ``severity_reason``) and in every renderer, instead of
a severity of 0 read as "neutral" or a drift of 0 read as "no trend". On pairwise verdicts,
self-preference is stated on the pair (``analysis/self_preference/on_pairs``), not in points
of the joint model, whose figure depends on how games are grouped into sessions."""

from __future__ import annotations

import math
from typing import Callable

from council_db.analysis.loading.score_data import ScoreData
from council_db.report.model import BiasReport, NotIdentified, PairSelfPreference

NOT_IDENTIFIED = ["reviewer severity (harsh or generous)", "reviewer trends and change points (a drift of severity)",
                  "anchoring"]
IN_POINTS = ("self-preference in score points (it depends on how games are grouped into sessions): "
             "self_preference_on_pairs states it on the pair")
NO_THIRD_JUDGE = ("self-preference on pairs is null: it compares a judge's verdicts on pairs holding its own answer "
                  "with a third judge's verdicts on the same pair in the same order, and no pair has both")
# kind, subject, estimate, p-value, message: a member of the report's flag family
Candidate = tuple[str, str, float, float, str]


def attach(report: BiasReport, data: ScoreData, fit, metric: Callable) -> None:
    """Say which effects the design leaves unidentified, and why (``fixed_totals``); on
    pairwise verdicts, state self-preference on the pair. ``metric`` is the builder's."""
    fixed = fit.fixed_totals
    if fixed is None:
        return
    effects = NOT_IDENTIFIED + ([IN_POINTS] if fixed.pairwise else [])
    report.not_identified = NotIdentified(label=fixed.label, reason=fixed.reason(), effects=effects)
    for profile in report.reviewers:
        if profile.severity is None:
            profile.severity_reason = fixed.label
    if fixed.pairwise:
        _self_preference(report, data, metric)


def _self_preference(report: BiasReport, data: ScoreData, metric: Callable) -> None:
    """Each judge's and the pooled log odds ratio in place of the joint model's points."""
    from council_db.analysis.self_preference.on_pairs import self_preference_on_pairs  # pairwise verdicts only

    report.self_preference = None
    for profile in report.reviewers:
        profile.self_preference = None
    found = {f.judge: f for f in self_preference_on_pairs(data)}

    def stated(judge: str | None) -> PairSelfPreference | None:
        figure = found.get(judge)
        if figure is None:
            return None
        return metric(figure.estimate, figure.n_records, figure.n_sessions, cls=PairSelfPreference,
                      pairs=figure.estimate.n_sessions, odds_ratio=math.exp(figure.estimate.estimate))

    report.self_preference_on_pairs = stated(None)
    for profile in report.reviewers:
        profile.self_preference_on_pairs = stated(profile.reviewer_id)
    if data.self_review.any() and report.self_preference_on_pairs is None:
        report.warnings.append(NO_THIRD_JUDGE)


def candidates(report: BiasReport) -> list[Candidate]:
    """Each judge's self-preference on pairs as a member of the flag family."""
    out = []
    for profile in report.reviewers:
        own = profile.self_preference_on_pairs
        if own is not None and own.p_value is not None:
            out.append(("self_preference", profile.reviewer_id, own.estimate, own.p_value,
                        f"self-preference of {profile.reviewer_id}: log odds {own.estimate:+.2f} (odds ratio "
                        f"{own.odds_ratio:.2f}) that it picks its own answer, against third judges on the same pairs "
                        f"(95% CI {own.ci_low:+.2f} to {own.ci_high:+.2f})"))
    return out
