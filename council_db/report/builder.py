"""Building the bias report from a window's scores: the joint model for every effect that
raw numbers would confound, honest correlations for length, one Benjamini-Hochberg family
for the flags, and a warning wherever a number cannot be had."""

from __future__ import annotations

import math
from datetime import datetime, timezone

import msgspec
import numpy as np

from council_db.analysis import stats
from council_db.analysis.effects.agreement import agreement
from council_db.analysis.effects.length import answer_table, naive_pooled_r
from council_db.analysis.joint import joint_model
from council_db.analysis.loading.score_data import ScoreData, keep_sessions, known_lengths, log_length_sd
from council_db.analysis.loading.window import SAMPLE_METHOD, Requested, unreadable_warnings
from council_db.analysis.loading.window_totals import WindowTotals
from council_db.analysis.stats.correlation import pooled_r_from_sums, within_session_correlation_from_sums
from council_db.analysis.stats.group_means import group_means
from council_db.analysis.stats.meta_analysis import meta_analysis_from_sums
from council_db.analysis.stats.unique_rows import distinct
from council_db.contract.timestamps import format_us
from council_db.report import coverage, pairwise_odds, pairwise_section, position_section, reference_section, wide_panel
from council_db.report import sections as report_sections
from council_db.report.identity_model import reviewer_identity
from council_db.report.model import (
    AgreementMetric,
    BiasReport,
    Flag,
    Heterogeneity,
    Length,
    Metric,
    ModelQuality,
    ReportWindow,
    ReviewerProfile,
    Sample,
)
from council_db.report.p_values import p_value
from council_db.report.scale_bound import beyond_scale

FDR = 0.05
FLAG_ORDER = ["reviewer_severity", "position", "verbosity", "self_preference", "trend", "change_point", "anomaly",
              "affinity", "anchoring", reference_section.KIND]
BOOTSTRAP_RESAMPLES = 1000


class _Context(msgspec.Struct):
    data: ScoreData
    tier: str
    rng: np.random.Generator
    fitted: np.ndarray | None = None  # records the joint model used (sessions with two or more)
    pooled: ScoreData | None = None  # what figures pooled over the window read: the hash sample (coverage_model)

    def metric(self, value, n_records: int | None = None, n_sessions: int | None = None,
               cls: type[Metric] = Metric, **extra) -> Metric | None:
        """A Metric from any estimate-like object (estimate, ci_low, ci_high, p_value)."""
        if value is None or _missing(value.estimate):
            return None
        return cls(estimate=float(value.estimate), ci_low=_clean(value.ci_low), ci_high=_clean(value.ci_high),
                   p_value=_clean(getattr(value, "p_value", None)),
                   n_sessions=self.data.n_sessions if n_sessions is None else n_sessions,
                   n_records=self.data.n_records if n_records is None else n_records,
                   confidence=self.tier, **extra)

    def joint(self, value, among: np.ndarray | None = None, cls: type[Metric] = Metric, **extra) -> Metric | None:
        """A joint-model Metric whose n counts the records (of ``among``) the fit used, and their
        sessions: a session with one score adds nothing to a model with an effect per session,
        so it counts in the window but not here."""
        used = self.fitted if among is None else self.fitted & among
        return self.metric(value, int(used.sum()), len(distinct(self.data.session[used])), cls, **extra)

    def joint_rows(self, value, rows: np.ndarray) -> Metric | None:
        """``joint`` over the records at ``rows`` (ascending positions): each reviewer of a wide
        panel reads its own rows, not a mask over every record (reviewers x records)."""
        if value is None or _missing(value.estimate):
            return None
        used = rows[self.fitted[rows]]
        return self.metric(value, len(used), len(distinct(self.data.session[used])))


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _clean(value) -> float | None:
    return None if _missing(value) else float(value)


def build(data: ScoreData, *, as_of: str | None = None, filters: dict | None = None, seed: int = 0,
          resamples: int = BOOTSTRAP_RESAMPLES, totals: WindowTotals | None = None,
          window_sessions: int | None = None, requested: Requested | None = None,
          with_reference: ScoreData | None = None, for_rules: bool = False,
          hash_sample: np.ndarray | None = None, per_subject: int = 0) -> BiasReport:
    """The report for these scores. ``seed`` fixes the session resampling, so the same data
    gives the same numbers. When ``data`` is a sample of a larger window (``window_sessions``
    sessions), ``totals`` (whole-window sums) give the counts and length correlations.
    ``requested`` (``Window.requested()``) is the span the window asked for, which the report
    states beside the span its sessions fill. ``with_reference`` is ``data`` with its human
    raters' and gold labels' scores too (``data`` holds the judges' only): the section "Against
    the reference". ``for_rules`` (council-db check) leaves out what neither a flag nor a rule
    reads: the agreement between reviewers (alpha), drawn last so that no other figure's
    resampling depends on whether it was. ``hash_sample`` marks the sessions of a stratified
    sample that its hash-based part chose (None: nothing was added; ``per_subject`` the floor
    the rest met): figures pooled over the window read those alone."""
    tier = stats.confidence_tier(totals.sessions if totals else data.n_sessions)
    pooled = data if hash_sample is None else keep_sessions(data, hash_sample)
    context = _Context(data, tier, np.random.default_rng(seed), pooled=pooled)
    warnings = _data_warnings(data, totals)
    window = _window(data, totals, window_sessions, as_of, filters, requested)
    if window.sample is not None:
        window.sample = coverage.stated(window.sample, totals is not None, hash_sample, per_subject)
        warnings.append(coverage.sample_warning(window.sample))
    parts: dict = dict(length=None, position=None, reviewers=[], models=[], self_preference=None, agreement=None)
    sections = report_sections.Sections()
    fit = None
    if tier == "insufficient":
        warnings.append(f"collecting data: {window.sessions} sessions, metrics need at least 10")
    else:
        if tier == "preliminary":
            warnings.append("preliminary: fewer than 20 sessions, estimates are highly volatile")
        fit = joint_model.fit(data)
        context.fitted = np.isfinite(fit.residuals)
        warnings.extend(fit.warnings + _single_score_sessions(data, fit))
        parts = dict(
            reviewers=_reviewers(context, fit), models=_models(context, fit),
            position=position_section.position(data, fit, context.metric, context.joint, warnings),
            length=_length(context, fit, resamples, totals),
            self_preference=context.joint(fit.self_preference, data.self_review),
        )
        sections = report_sections.compute(data, fit, context.metric, context.rng, resamples)
        parts["agreement"] = None if for_rules else _agreement(context, resamples)
    report = BiasReport(generated_at=datetime.now(timezone.utc).isoformat().replace("+00:00", "Z"),
                        window=window, confidence=tier, excluded=dict(totals.excluded if totals else data.excluded),
                        flags=[], warnings=warnings, **parts)
    if with_reference is not None and tier != "insufficient":
        reference_section.attach(report, with_reference)
    if fit is not None:
        pairwise_section.attach(report, data, fit, context.metric)
        wide_panel.attach(report, fit)
        if fit.fixed_totals is not None and fit.fixed_totals.pairwise:
            pairwise_odds.attach(report, data, context.metric)
    report.flags = _flags(report, sections)
    position_section.note_disagreement(report)
    sections.fill(report)
    _classify(report)
    report.warnings.extend(_missing_metric_warnings(report, for_rules))
    return report


def _window(data: ScoreData, totals: WindowTotals | None, window_sessions: int | None, as_of: str | None,
            filters: dict | None, requested: Requested | None) -> ReportWindow:
    """Two spans, each by one rule: the one asked for (from the options and the as-of time)
    and the one found (the first and last session time in the report). Only both together
    say that `--days 30` on data that ended three weeks ago read nine days of sessions."""
    sample = None
    if window_sessions is not None and data.n_sessions < window_sessions:
        sample = Sample(sessions=data.n_sessions, of=window_sessions, method=SAMPLE_METHOD)
    if totals is not None:
        start, end, sessions, records = totals.start_us, totals.end_us, totals.sessions, totals.records
    else:
        times = data.session_ts_us[data.session_ts_us >= 0]
        start, end = (int(times.min()), int(times.max())) if len(times) else (None, None)
        sessions, records = data.n_sessions, data.n_records
    asked = {} if requested is None else dict(requested=requested.words, requested_start=format_us(requested.start_us),
                                              requested_end=format_us(requested.end_us))
    return ReportWindow(start=format_us(start), end=format_us(end), sessions=sessions, records=records,
                        scale=data.scale, as_of=as_of, filters=filters or {}, sample=sample, **asked)


def _agreement(context: _Context, resamples: int) -> AgreementMetric | None:
    """alpha with the answers, scores and sessions it rests on, not the window's."""
    found = agreement(context.pooled, resamples, context.rng)
    return context.metric(found.alpha, found.values, found.alpha.n_sessions, cls=AgreementMetric, units=found.units)


def _missing_metric_warnings(report: BiasReport, for_rules: bool) -> list[str]:
    """Why a metric the joint model does not explain is null (not one ``for_rules`` left out)."""
    if report.confidence == "insufficient":
        return []
    out = []
    if report.agreement is None and not for_rules:
        out.append("agreement is null: it needs answers scored by at least two reviewers (one reviewer "
                   "scoring an answer again is self-consistency, not agreement)")
    if report.length is not None and report.length.headline is None and not for_rules:
        out.append("the within-session length correlation is null: it needs sessions with at least two "
                   "answers of different lengths and scores")
    return out


def _data_warnings(data: ScoreData, totals: WindowTotals | None) -> list[str]:
    warnings = []
    undated = totals.undated if totals else int((data.session_ts_us < 0).sum())
    if undated:
        warnings.append(f"{undated} sessions have no timestamp: they count here but not in time windows")
    records = totals.records if totals else data.n_records
    sized = totals.known_lengths if totals else int(known_lengths(data).sum())
    if not sized and records:
        warnings.append("no answer length is known (a judge log imported without its answers): no length figure "
                        "is computed")
    elif sized < records:
        warnings.append(f"{records - sized:,} scores are of answers whose length is unknown: length figures use the "
                        f"other {sized:,}")
    excluded = totals.excluded if totals else data.excluded
    other_scales = {k: v for k, v in excluded.items() if k.startswith("other_scale:")}
    if other_scales:
        warnings.append(f"scores on other scales are left out (scales are not mixed): {other_scales}")
    return warnings + unreadable_warnings(excluded)


def _single_score_sessions(data: ScoreData, fit) -> list[str]:
    """Why the joint model's n is below the window's: the window counts every session, each
    metric the sessions it rests on."""
    single = data.n_sessions - fit.n_sessions
    if fit.n_sessions == 0 or single <= 0:
        return []
    return [f"the joint model (severity, quality, slot effects, adjusted length, self-preference, trends, "
            f"affinity, anchoring, anomalies) rests on the {fit.n_sessions:,} sessions with two or more scores: "
            f"{single:,} session{'s' if single > 1 else ''} with a single score carr{'y' if single > 1 else 'ies'} "
            "no within-session information"]


def _reviewers(context: _Context, fit) -> list[ReviewerProfile]:
    data = context.data
    profiles = []
    order = np.argsort(data.reviewer, kind="stable")  # each reviewer's rows, ascending: one sort, not a mask each
    bounds = np.searchsorted(data.reviewer[order], np.arange(len(data.reviewers) + 1))
    sized = known_lengths(data)
    raw = group_means(data.score, data.reviewer, data.session, len(data.reviewers))  # every reviewer's in one pass
    for number, name in enumerate(data.reviewers):
        mine = order[bounds[number]:bounds[number + 1]]
        if not len(mine):
            continue
        records = len(mine)
        profiles.append(ReviewerProfile(
            reviewer_id=name, identity=reviewer_identity(data.identities, name), records=records,
            raw_mean=context.metric(raw.figure(number), records, int(raw.sessions[number])),
            raw_sd=float(raw.sd[number]) if records > 1 else None,
            severity=context.joint_rows(fit.severity.get(name), mine),
            classification="unknown",
            scale_sd=_clean(fit.residual_sd_by_reviewer.get(name)),
            self_preference=context.joint_rows(fit.self_preference_by_reviewer.get(name),
                                               mine[data.self_review[mine]]),
            length_effect=context.joint_rows(_per_sd(fit.length_by_reviewer.get(name), data), mine[sized[mine]]),
        ))
    return profiles


def _per_sd(effect: joint_model.Effect | None, data: ScoreData) -> joint_model.Effect | None:
    """A reviewer's length slope per SD of log length, as the panel's adjusted effect is stated."""
    return None if effect is None else joint_model.per_sd(effect, log_length_sd(data))


def _models(context: _Context, fit) -> list[ModelQuality]:
    data = context.data
    out = []
    for number, name in enumerate(data.models):
        mine = data.model == number
        if mine.any():
            out.append(ModelQuality(model_id=name, records=int(mine.sum()),
                                    quality=context.joint(fit.quality.get(name), mine)))
    return out


def _length(context: _Context, fit, resamples: int, totals: WindowTotals | None) -> Length:
    data = context.data
    if totals is None:
        data = context.pooled  # pooled over the window's sessions: the hash sample's (coverage_model)
        answers = answer_table(data)
        r_s, n_s = stats.per_session_correlations(answers)
        meta = stats.meta_analysis(r_s, n_s)
        headline = stats.within_session_correlation(answers.session, answers.log_length, answers.mean_score,
                                                    resamples, context.rng)
        naive = naive_pooled_r(data)
        sized = known_lengths(data)
        n_answers, n_sessions, n_records = len(answers.session), len(distinct(data.session[sized])), int(sized.sum())
    elif totals.within is None:  # the counts alone (check's): no correlation summed, none stated
        meta = headline = naive = None
        n_answers, n_sessions, n_records = totals.answers, totals.sized_sessions, totals.known_lengths
    else:  # a window too large to read record by record: per-session sums over all of it
        meta = meta_analysis_from_sums(totals.fisher, totals.random_sums)
        headline = within_session_correlation_from_sums(totals.within)
        naive = pooled_r_from_sums(totals.pooled, n_sessions=totals.sized_sessions)
        n_answers, n_sessions, n_records = totals.answers, totals.sized_sessions, totals.known_lengths
    sized_records = known_lengths(context.data)  # the panel's slope is on every record of known length
    heterogeneity = None
    if meta is not None and meta.k:
        heterogeneity = Heterogeneity(q=meta.q, df=meta.df, i2=meta.i2, tau2=meta.tau2,
                                      sessions_used=meta.k, sessions_dropped=meta.dropped)
    length = Length(
        headline=headline and context.metric(headline, n_answers, headline.n_sessions),  # sessions with >= 2 answers
        headline_method=(headline and headline.method) or None,
        naive_pooled_r=context.metric(naive, n_records, n_sessions),
        fixed_effect_r=meta and context.metric(meta.fixed, n_answers, meta.k),
        random_effects_r=meta and context.metric(meta.random, n_answers, meta.k),
        heterogeneity=heterogeneity,
        adjusted_effect=context.joint(fit.length_per_sd, sized_records),
        adjusted_effect_per_log_length=context.joint(fit.length_per_log, sized_records),
        log_length_sd=_clean(log_length_sd(data)),
        disagreement=None,
    )
    length.disagreement = _disagreement(length)
    return length


def _direction(metric: Metric | None) -> int:
    """+1 / -1 when the CI excludes zero on that side, 0 when it includes zero or is missing."""
    if metric is None or metric.ci_low is None or metric.ci_high is None:
        return 0
    return 1 if metric.ci_low > 0 else -1 if metric.ci_high < 0 else 0


def _disagreement(length: Length) -> str | None:
    headline, adjusted = _direction(length.headline), _direction(length.adjusted_effect)
    if headline == adjusted:
        return None
    said = {1: "longer answers score higher", -1: "longer answers score lower", 0: "no clear link"}
    return (f"the within-session correlation says {said[headline]}, the joint model (within candidate model) "
            f"says {said[adjusted]}: the raw link is likely carried by which models write longer answers")


def _flags(report: BiasReport, sections: report_sections.Sections) -> list[Flag]:
    """Every test in one family (with the trend, change, anomaly and pair tests of
    report_sections); flagged where the Benjamini-Hochberg q-value is <= 0.05. An effect
    larger than the scale's whole range is not tested (``scale_bound``)."""
    candidates: list[tuple[str, str, float, float, str]] = []

    def add(candidate: tuple[str, str, float, float, str], what: str) -> None:
        beyond = beyond_scale(candidate[2], report.window.scale, what)
        if beyond is None:
            candidates.append(candidate)
        else:
            report.warnings.append(beyond)

    for profile in report.reviewers:
        severity = profile.severity
        if severity is not None and severity.p_value is not None:
            word = "harsh" if severity.estimate < 0 else "generous"
            add(("reviewer_severity", profile.reviewer_id, severity.estimate, severity.p_value,
                 f"{word} reviewer {profile.reviewer_id}: {severity.estimate:+.2f} points vs the "
                 f"average reviewer (95% CI {severity.ci_low:+.2f} to {severity.ci_high:+.2f})"),
                f"the severity of reviewer {profile.reviewer_id}")
        own = profile.self_preference
        if own is not None and own.p_value is not None:
            add(("self_preference", profile.reviewer_id, own.estimate, own.p_value,
                 f"self-preference of {profile.reviewer_id}: {own.estimate:+.2f} points on its own "
                 f"answers (95% CI {own.ci_low:+.2f} to {own.ci_high:+.2f})"),
                f"the self-preference of {profile.reviewer_id}")
    position = report.position
    if position is not None and position.test is not None and position.slot_effects:
        largest = max(position.slot_effects, key=lambda s: abs(s.estimate))
        add(("position", "display slots", largest.estimate, position.test.p_value,
             f"position bias: slot {largest.position} scores {largest.estimate:+.2f} points vs the "
             f"average slot (all slots equal: p {p_value(position.test.p_value)})"), "the position effect")
    adjusted = report.length.adjusted_effect if report.length else None
    if adjusted is not None and adjusted.p_value is not None:
        add(("verbosity", "answer length", adjusted.estimate, adjusted.p_value,
             f"verbosity: {adjusted.estimate:+.2f} points per SD of log length, within model "
             f"(95% CI {adjusted.ci_low:+.2f} to {adjusted.ci_high:+.2f})"), "the length effect")
    candidates += reference_section.candidates(report) + pairwise_section.candidates(report) \
        + pairwise_odds.candidates(report)
    groups = {**sections.groups,
              position_section.GROUP: position_section.candidates(report.position, report.window.scale,
                                                                  report.warnings)}
    scored = report_sections.one_family(candidates, groups, FDR)
    flags = [Flag(kind=kind, subject=subject, estimate=estimate, p_value=p, q_value=float(q), message=message)
             for (kind, subject, estimate, p, message), q in scored if q <= FDR]
    return sorted(flags, key=lambda f: (FLAG_ORDER.index(f.kind), f.p_value, f.subject))


def _classify(report: BiasReport) -> None:
    """Harsh or generous only when the severity test survives the FDR control, so clean
    data names nobody; neutral otherwise; unknown when severity cannot be estimated."""
    flagged = {f.subject for f in report.flags if f.kind == "reviewer_severity"}
    for profile in report.reviewers:
        if profile.severity is None:
            profile.classification = "unknown"
        elif profile.reviewer_id in flagged:
            profile.classification = "harsh" if profile.severity.estimate < 0 else "generous"
        else:
            profile.classification = "neutral"
