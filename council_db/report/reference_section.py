"""The report's "Against the reference" section: each judge against the window's human raters
or gold labels (analysis/reference), put into the report's contract (reference_model), and
the tests whose p joins the report's one Benjamini-Hochberg family: a judge agreeing with
single raters less than the raters agree with each other ("below the human ceiling")."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from council_db.analysis.stats.tiers import confidence_tier
from council_db.report.reference_model import (
    Contrast,
    FamilyFigures,
    GoldFigures,
    JudgeReference,
    ReferenceMetric,
    ReferenceOverview,
    ReferenceShare,
    Replacement,
    SelfPreferenceFigures,
    VerdictFigures,
)

if TYPE_CHECKING:
    from council_db.analysis.loading.score_data import ScoreData
    from council_db.analysis.reference import agreement, biases, gold, summary
    from council_db.analysis.stats.alt_test import AltTest
    from council_db.analysis.stats.estimate import Estimate
    from council_db.report.model import BiasReport

KIND = "below_ceiling"
# kind, subject, estimate, p-value, message
Candidate = tuple[str, str, float, float, str]


def attach(report: BiasReport, data: ScoreData) -> None:
    """Fill the section from ``data`` (the judges' and the reference raters' scores of the
    report's sessions): each judge's ``reference`` object and the report's. Nothing when the
    window has no reference rater."""
    from council_db.analysis.reference.summary import reference_summary

    found = reference_summary(data, data.kinds)
    if found is None:
        return
    judges = {judge.judge: judge for judge in found.judges}
    for profile in report.reviewers:
        if profile.reviewer_id in judges:
            profile.reference = _judge(judges[profile.reviewer_id], found.gold_pairs)
    report.reference = _overview(found)
    report.warnings.append(_note(data))


def _note(data: ScoreData) -> str:
    """Where the reference raters' scores went: out of the judges' figures and the window's counts."""
    kind = np.array([data.kinds.get(name, "judge") for name in data.reviewers], dtype=object)[data.reviewer]
    counts = ", ".join(f"{int((kind == k).sum()):,} {k}" for k in ("human", "gold") if (kind == k).any())
    return (f"scores of reference raters ({counts}) are the reference, not judgments: they are left out of every "
            "judge figure and of the window's record count, and compared in 'Against the reference'")


def candidates(report: BiasReport) -> list[Candidate]:
    """One test per judge with a ceiling to compare with: its agreement with single raters
    minus the raters' own, one-sided (a judge above the ceiling is no finding)."""
    out = []
    for profile in report.reviewers:
        family = _headline_family(profile.reference)
        below = family.below_ceiling if family else None
        if below is None or below.p_value is None:
            continue
        out.append((KIND, profile.reviewer_id, below.estimate, below.p_value,
                    f"{profile.reviewer_id} agrees with people less than they agree with each other: "
                    f"{below.estimate:+.2f} (95% CI {_signed(below.ci_low)} to {_signed(below.ci_high)})"))
    return out


def _headline_family(reference: JudgeReference | None) -> FamilyFigures | None:
    if reference is None:
        return None
    return reference.pairwise if reference.family == "pairwise" else reference.pointwise


def _signed(value: float | None) -> str:
    return "n/a" if value is None else f"{value:+.2f}"


def metric(found: Estimate | None) -> ReferenceMetric | None:
    """An analysis Estimate as the contract's metric; None when the data cannot give one."""
    if found is None or not math.isfinite(found.estimate):
        return None
    sessions = int(found.n_sessions or 0)
    return ReferenceMetric(estimate=float(found.estimate), ci_low=_finite(found.ci_low), ci_high=_finite(found.ci_high),
                           n_sessions=sessions, confidence=confidence_tier(sessions), p_value=_finite(found.p_value),
                           method=found.method)


def _finite(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else float(value)


def _share(found: gold.Share) -> ReferenceShare:
    estimate, sessions = found.estimate, int(found.estimate.n_sessions or 0)
    return ReferenceShare(estimate=_finite(estimate.estimate), ci_low=_finite(estimate.ci_low),
                          ci_high=_finite(estimate.ci_high), n_sessions=sessions, confidence=confidence_tier(sessions),
                          method=estimate.method, count=found.count, of=found.of)


def _verdicts(found: agreement.VerdictAgreement | None) -> VerdictFigures | None:
    if found is None:
        return None
    return VerdictFigures(agreement=metric(found.agreement), kappa=metric(found.kappa),
                          agreement_without_ties=metric(found.agreement_without_ties),
                          kappa_without_ties=metric(found.kappa_without_ties), tau_b=metric(found.tau_b),
                          pairs=float(found.pairs), sessions=found.sessions, items=found.items)


def _replacement(found: AltTest | None) -> Replacement | None:
    if found is None:
        return None
    return Replacement(metric=found.metric, epsilon=found.epsilon, q=found.q, humans_tested=len(found.comparisons),
                       humans_skipped=found.skipped, instances=found.instances,
                       winning_rate=_finite(found.winning_rate), advantage_probability=_finite(found.advantage_probability),
                       passed=found.passed)


def _family(found: summary.Family | None) -> FamilyFigures | None:
    if found is None:
        return None
    return FamilyFigures(with_reference=_verdicts(found.with_reference), with_raters=_verdicts(found.with_raters),
                         below_ceiling=metric(found.below_ceiling), replacement=_replacement(found.replacement),
                         alpha=metric(found.alpha), mean_difference=metric(found.mean_difference))


def _gold(found: gold.GoldAccuracy | None, labelled: int) -> GoldFigures | None:
    if found is None:
        return None
    return GoldFigures(labelled=labelled, unjudged=labelled - found.net_correct.of,
                       accuracy_listed=_share(found.accuracy_listed), accuracy_swapped=_share(found.accuracy_swapped),
                       accuracy=_share(found.accuracy), both_correct=_share(found.both_correct),
                       same_verdict=_share(found.same_verdict), net_correct=_share(found.net_correct))


def _contrast(found: biases.Contrast) -> Contrast:
    return Contrast(difference=metric(found.difference), judge=metric(found.judge), reference=metric(found.reference))


def _self_preference(found: biases.SelfPreference | None) -> SelfPreferenceFigures | None:
    if found is None:
        return None
    return SelfPreferenceFigures(excess=metric(found.excess),
                                 own_when_reference_prefers_own=metric(found.own_when_reference_prefers_own),
                                 own_when_reference_ties=metric(found.own_when_reference_ties),
                                 own_when_reference_prefers_other=metric(found.own_when_reference_prefers_other))


def _judge(found: summary.JudgeReference, gold_pairs: int) -> JudgeReference:
    return JudgeReference(
        family="pairwise" if found.pairwise is not None else "pointwise",
        agreement=metric(found.agreement), kappa=metric(found.kappa),
        pairwise=_family(found.pairwise), pointwise=_family(found.pointwise), gold=_gold(found.gold, gold_pairs),
        length=_contrast(found.length), first_slot=_contrast(found.first_slot),
        self_preference=_self_preference(found.self_preference), reasoning_chain=metric(found.reasoning_chain))


def _overview(found: summary.ReferenceSummary) -> ReferenceOverview:
    ceiling = found.ceiling.headline
    return ReferenceOverview(
        kind=found.reference_kind, raters=found.raters, sessions=found.sessions, items=found.items,
        no_majority=found.no_majority,
        agreement=metric(ceiling.agreement) if ceiling else None, kappa=metric(ceiling.kappa) if ceiling else None,
        pairwise=_verdicts(found.ceiling.pairwise), pointwise=_verdicts(found.ceiling.pointwise),
        alpha=metric(found.ceiling.alpha), gold_pairs=found.gold_pairs,
        gold_accuracy={judge.judge: _share(judge.gold.accuracy) for judge in found.judges if judge.gold is not None})
