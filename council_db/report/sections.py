"""The report's sections on time, broken sessions and pairs (trends, change points,
anomalies, affinity, anchoring, self-consistency), computed from the joint model's
residuals, and their tests, which join the report's one Benjamini-Hochberg family."""

from __future__ import annotations

from typing import Callable

import msgspec
import numpy as np

from council_db.analysis.drift import changepoints, panel, recent_severity, trends
from council_db.analysis.effects import affinity, agreement
from council_db.analysis.loading.score_data import ScoreData, keep_records
from council_db.analysis.position.calls import calls
from council_db.analysis.sessions import anomalies
from council_db.contract.timestamps import format_us
from council_db.report.model import (
    AffinityCell,
    AnchoringEffect,
    Anomaly,
    BiasReport,
    ChangePoint,
    Metric,
    Trend,
)
from council_db.report.p_values import p_value
from council_db.report.scale_bound import beyond_scale
from council_db.report.stability_model import RepeatStability, Retest, SelfConsistency
from council_db.report.trend_units import own_span, window_unit

# kind, subject, estimate, p-value, message
Candidate = tuple[str, str, float, float, str]
SWAPS_ONLY = ("the same as position consistency: the only repeats are the two display orders of swapped pairs, "
              "whose consistency the position section states (swapped pairs: same preference in both orders)")


class Sections(msgspec.Struct):
    """What the sections found; ``fill`` puts it in the report once the q-values are known."""

    trends: list[Trend] = msgspec.field(default_factory=list)
    changes: dict[tuple[str, str], changepoints.ChangeSearch] = msgspec.field(default_factory=dict)
    sessions: list[anomalies.SessionAnomaly] = msgspec.field(default_factory=list)
    affinity: list[AffinityCell] = msgspec.field(default_factory=list)
    anchoring: list[AnchoringEffect] = msgspec.field(default_factory=list)
    self_consistency: SelfConsistency | None = None
    recent_severity: dict[str, tuple[Metric, str]] = msgspec.field(default_factory=dict)  # reviewer -> (metric, at)
    groups: dict[str, list[Candidate]] = msgspec.field(default_factory=dict)  # tests entering the family as one member
    notes: list[str] = msgspec.field(default_factory=list)  # why a section's tests were not run

    def add(self, group: str, candidate: Candidate) -> None:
        self.groups.setdefault(group, []).append(candidate)

    def fill(self, report: BiasReport) -> None:
        """Flagged change points and anomalous sessions, with the family's q-values."""
        q_of = {(f.kind, f.subject): f.q_value for f in report.flags}
        for trend in self.trends:
            found = self.changes.get((trend.kind, trend.subject))
            q = q_of.get(("change_point", f"{trend.kind} {trend.subject}"))
            if found is not None and q is not None:
                trend.change_points.append(ChangePoint(
                    at=format_us(found.at_us), p_value=found.p_value, q_value=q, shift=found.shift,
                    sessions_before=found.sessions_before, sessions_after=found.sessions_after))
        report.trends = self.trends
        for profile in report.reviewers:  # a drifting reviewer's window-average severity is not its severity now
            if ("trend", f"reviewer {profile.reviewer_id}") in q_of and profile.reviewer_id in self.recent_severity:
                profile.severity_drifts = True
                profile.recent_severity, profile.recent_severity_at = self.recent_severity[profile.reviewer_id]
        report.warnings.extend(self.notes)
        report.anomalies = [Anomaly(session_id=a.session_id, p_value=a.p_value, reason=a.reason,
                                    q_value=q_of[("anomaly", a.session_id)])
                            for a in self.sessions if ("anomaly", a.session_id) in q_of]
        report.affinity, report.anchoring = self.affinity, self.anchoring
        report.self_consistency = self.self_consistency


def compute(data: ScoreData, fit, metric: Callable, rng: np.random.Generator, resamples: int = 1000) -> Sections:
    """Every section; ``metric`` turns an estimate into the report's Metric (n, CI, tier);
    ``resamples`` session resamples for the bootstrap CIs."""
    out = Sections()
    residuals = fit.residuals
    # a reviewer's trend is a drift of its severity: where the design fixes its totals, nil by construction
    kinds = ("model",) if fit.fixed_totals is not None else ("reviewer", "model")
    for kind in kinds:
        _trends(out, trends.timed_residuals(data, residuals, kind), metric, rng, data.scale)
    if "reviewer" in kinds:
        for name, recent in recent_severity.at_window_end(trends.timed_residuals(data, residuals, "reviewer"),
                                                          fit.severity).items():
            found = metric(recent, recent.n_records, recent.n_sessions)
            if found is not None:
                out.recent_severity[name] = (found, format_us(recent.at_us))
    out.notes.extend(panel.changes(data))
    out.sessions = anomalies.sessions(data, residuals)
    for a in out.sessions:
        out.add("anomalous sessions", ("anomaly", a.session_id, a.spread_ratio, a.p_value,
                                       f"anomalous session {a.session_id}: {a.reason}"))
    _pairs(out, data, fit, metric)
    _self_consistency(out, data, metric, rng, resamples)
    return out


def _trends(out: Sections, timed: trends.TimedResiduals, metric: Callable, rng: np.random.Generator,
            scale: str) -> None:
    """Each subject's slope and change search; a slope resting on one instant, or a figure
    larger than the scale, is shown but not tested."""
    note = changepoints.why_not_tested(timed)
    if note is not None and note not in out.notes:
        out.notes.append(note)
    out.notes.extend(note for note in trends.alone(timed) if note not in out.notes)
    changes = {c.subject: c for c in changepoints.search(timed, rng)}
    span_days = timed.span_us / trends.DAY_US
    for slope in trends.slopes(timed, rng):
        label = f"{timed.kind} {slope.subject}"
        change = changes.get(slope.subject)
        across, own = slope.over(timed.span_us), slope.over(slope.span_us)
        short = slope.short_span(timed.span_us)
        out.trends.append(Trend(subject=slope.subject, kind=timed.kind, change_points=[],
                                slope_per_30d=metric(slope, slope.n_records, slope.n_sessions),
                                span_days=span_days, change_over_span=metric(across, slope.n_records, slope.n_sessions),
                                subject_span_days=slope.span_us / trends.DAY_US, short_span=short,
                                change_over_subject_span=metric(own, slope.n_records, slope.n_sessions),
                                change_search_p_value=None if change is None else change.p_value))
        shown, words = _stated(slope, across, own, span_days, short)
        beyond = beyond_scale(shown.estimate, scale, f"the drift of {label}")
        if slope.one_instant or beyond is not None:  # shown, not tested
            out.notes.append(slope.one_instant_note() if slope.one_instant else beyond)
            trend = out.trends[-1]
            for figure in (trend.slope_per_30d, trend.change_over_span, trend.change_over_subject_span):
                if figure is not None:
                    figure.p_value = None
            continue
        out.add(f"{timed.kind} trends", ("trend", label, slope.estimate, slope.p_value,
                               f"drift of {label}: {shown.estimate:+.2f} {words} vs the other "
                               f"{timed.kind}s (95% CI {shown.ci_low:+.2f} to {shown.ci_high:+.2f})"))
    for subject, change in changes.items():
        out.changes[(timed.kind, subject)] = change
        beyond = beyond_scale(change.shift, scale, f"the change in {timed.kind} {subject}")
        if beyond is not None:
            out.notes.append(beyond)
            continue
        out.add(f"{timed.kind} trends", ("change_point", f"{timed.kind} {subject}", change.shift, change.p_value,
                               f"change in {timed.kind} {subject} from {format_us(change.at_us)}: "
                               f"a step of {change.shift:+.2f} points beyond its trend, relative to the other "
                               f"{timed.kind}s (permutation p {p_value(change.p_value)})"))


def _stated(slope: trends.Slope, across: trends.Slope, own: trends.Slope, span_days: float,
            short: bool) -> tuple[trends.Slope, str]:
    """The figure a flag states and its unit: the report's (``trend_units``), or the change
    across the subject's own span when that is under half the unit."""
    unit, across_window = window_unit(span_days)
    if short:
        too_short = f"too short to state {unit.removeprefix('points ')}"
        return own, f"points {own_span(slope.span_us / trends.DAY_US)} ({too_short})"
    return (across if across_window else slope), unit


def _pairs(out: Sections, data: ScoreData, fit, metric: Callable) -> None:
    """Every affinity pair in the JSON; in the family, each contrast once (a mirror image is
    the same test again, and counting it twice would loosen the family's control). Anchoring
    is not identified where the design fixes each reviewer's total in a session: the other
    answers' scores are then the first one's complement, whatever the reviewer thinks."""
    residuals = fit.residuals
    cells = affinity.affinity(data, residuals, fit.projection)
    for cell in cells:
        m = metric(cell.estimate, cell.n_records, cell.estimate.n_sessions)
        if m is None:
            continue
        out.affinity.append(AffinityCell(reviewer_id=cell.reviewer, model_id=cell.model, residual_mean=m,
                                         mirror_of=cell.mirror_of))
        if cell.mirror_of is not None:
            continue
        e = cell.estimate
        beyond = beyond_scale(e.estimate, data.scale, f"the affinity of reviewer {cell.reviewer} for {cell.model}")
        if beyond is not None:
            out.notes.append(beyond)
            continue
        mirrors = "".join(f"; mirrored by {c.label} at {c.estimate.estimate:+.2f} (the same contrast: tested once)"
                          for c in cells if c.mirror_of == cell.label)
        out.add("affinity", ("affinity", cell.label, e.estimate, e.p_value,
                               f"affinity of reviewer {cell.reviewer} for {cell.model}: {e.estimate:+.2f} points "
                               f"beyond severity and quality (95% CI {e.ci_low:+.2f} to {e.ci_high:+.2f}){mirrors}"))
    if fit.fixed_totals is not None:
        out.notes.append(f"anchoring is not identified: {fit.fixed_totals.reason()}, so the other answers' scores "
                         "follow from the first-shown answer's by construction; not tested")
        return
    for effect in affinity.anchoring(data, residuals):
        m = metric(effect.estimate, effect.n_records, effect.estimate.n_sessions)
        if m is None:
            continue
        out.anchoring.append(AnchoringEffect(reviewer_id=effect.reviewer, effect=m))
        if effect.reviewer is not None:
            e = effect.estimate
            out.add("anchoring", ("anchoring", effect.reviewer, e.estimate, e.p_value,
                                   f"anchoring of reviewer {effect.reviewer}: its other scores move "
                                   f"{e.estimate:+.2f} points per point of the first-shown answer's score, beyond "
                                   f"the last-shown answer's pull (95% CI {e.ci_low:+.2f} to {e.ci_high:+.2f})"))


def _self_consistency(out: Sections, data: ScoreData, metric: Callable, rng: np.random.Generator,
                      resamples: int) -> None:
    """Test-retest where a reviewer scored the same answer more than once: pooled (share of
    identical pairs, mean |difference|) and per reviewer. The two display orders of a swapped
    pair are not a retest: whether the preference held in both is position consistency, which
    the position section states (``position.swaps``), so they are left out here."""
    swapped = calls(data).swap_group >= 0
    data = keep_records(data, ~swapped)
    retests = affinity.self_consistency(data)
    if not retests:
        out.self_consistency = SelfConsistency(measurable=False, reviewers=[], note=SWAPS_ONLY if swapped.any() else
                                               "not measurable: no reviewer scored the same answer (session, "
                                               "candidate, length) twice")
        return
    rows = [Retest(reviewer_id=r.reviewer, pairs=r.pairs,
                   mean_abs_difference=metric(r.mean_abs_difference, 2 * r.pairs, r.mean_abs_difference.n_sessions))
            for r in retests]
    pooled = agreement.self_consistency(data, resamples, rng)
    out.self_consistency = SelfConsistency(
        measurable=True, reviewers=[r for r in rows if r.mean_abs_difference is not None], pairs=pooled.pairs,
        identical_share=metric(pooled.identical, pooled.records, pooled.identical.n_sessions),
        mean_abs_difference=metric(pooled.mean_abs_difference, pooled.records, pooled.mean_abs_difference.n_sessions),
        note="test-retest: two scores of the same answer by the same reviewer (kept out of agreement)",
        stability=_repeat_stability(data, metric, rng, resamples))


def _repeat_stability(data: ScoreData, metric: Callable, rng: np.random.Generator,
                      resamples: int) -> RepeatStability | None:
    """The repeat-stability part, its module loaded only for a window whose judges scored an
    answer again (llm-council's never do: 7 ms of every report's start-up)."""
    from council_db.report import stability_section

    return stability_section.stability(data, metric, rng, resamples)


def one_family(singles: list[Candidate], groups: dict[str, list[Candidate]],
               fdr: float) -> list[tuple[Candidate, float]]:
    """Benjamini-Hochberg q-values for the report's tests as one family of members: every
    test of the core report is a member; the trend and change tests of each kind, the session
    anomaly tests, the affinity pairs and the anchoring tests each enter as ONE member, with
    their Simes p-value (the smallest Benjamini-Hochberg q within the group). Hundreds of
    sessions (or dozens of pairs) would otherwise swamp the family, and with real effects in it
    every extra null test is one more chance of a false flag. Within a flagged member, tests
    are flagged by Benjamini-Hochberg among themselves at level fdr x R / m (R flagged among m
    members: Benjamini & Bogomolov 2014, which keeps the false discovery rate over both
    levels). A grouped test's q-value is its q within the group x m / R, and never below its
    member's q, so nothing in a group is flagged unless the group is."""
    from council_db.analysis.stats import benjamini_hochberg

    within = {name: benjamini_hochberg([c[3] for c in tests]) for name, tests in groups.items() if tests}
    members = [c[3] for c in singles] + [float(np.nanmin(q)) if np.isfinite(q).any() else float("nan")
                                         for q in within.values()]
    if not members:
        return []
    q = benjamini_hochberg(members)
    scored = list(zip(singles, q[:len(singles)].tolist()))
    selected = max(int((q <= fdr).sum()), 1)
    for (name, group_q), member_q in zip(within.items(), q[len(singles):]):
        adjusted = np.maximum(np.minimum(group_q * len(members) / selected, 1.0), member_q)
        scored += list(zip(groups[name], adjusted.tolist()))
    return scored
