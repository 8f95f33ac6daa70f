"""The bias report for people: plain text for a terminal (readable in a minute, with small
CI charts on a shared axis) and Markdown for pull requests and wikis."""

from __future__ import annotations

import math
from typing import Iterable

from council_db.markdown_text import markdown_text
from council_db.report.model import BiasReport, Metric, Position, ReportWindow, ReviewerProfile, SwapConsistency
from council_db.report import reference_render
from council_db.report.p_values import flag_line, p_value
from council_db.report.trend_units import trend_figure, trend_unit

BAR_WIDTH = 25


def _number(value: float | None, signed: bool = False, digits: int = 2) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"


def interval(metric: Metric | None, signed: bool = True, digits: int = 2) -> str:
    """'+0.42 [+0.30, +0.55]' or 'n/a'."""
    if metric is None or metric.estimate is None:
        return "n/a"
    return (f"{_number(metric.estimate, signed, digits)} "
            f"[{_number(metric.ci_low, signed, digits)}, {_number(metric.ci_high, signed, digits)}]")


def found(w: ReportWindow) -> str:
    """The span the report's sessions fill, as every renderer states it beside the one asked for."""
    sessions = f"{w.sessions:,} session{'' if w.sessions == 1 else 's'}"
    if not w.sessions:
        return "no sessions"
    if w.start is None:
        return f"{sessions}, none with a time"
    if w.start == w.end:
        return f"{sessions} at {w.start}" if w.sessions == 1 else f"{sessions}, all at {w.start}"
    return f"{sessions} from {w.start} to {w.end}"


def ci_bar(metric: Metric | None, low: float, high: float, width: int = BAR_WIDTH) -> str:
    """A one-line picture of an estimate and its CI on the axis [low, high], zero marked."""
    if metric is None or metric.estimate is None or metric.ci_low is None or high <= low:
        return " " * width
    cells = [" "] * width

    def at(value: float) -> int:
        return min(width - 1, max(0, round((value - low) / (high - low) * (width - 1))))

    if low < 0 < high:
        cells[at(0.0)] = "│"
    start, end = at(metric.ci_low), at(metric.ci_high)
    for i in range(start, end + 1):
        cells[i] = "─"
    cells[start], cells[end] = "├", "┤"
    cells[at(metric.estimate)] = "●"
    return "".join(cells)


def _axis(metrics: Iterable[Metric | None]) -> tuple[float, float]:
    """A symmetric axis around zero wide enough for every CI."""
    edges = [abs(v) for m in metrics if m is not None for v in (m.ci_low, m.ci_high, m.estimate) if v is not None]
    top = max(edges, default=1.0) or 1.0
    return -top, top


DESIGN_WORDS = {"one_shuffle": "one shuffle per session", "per_reviewer": "orders per reviewer",
                "balanced": "balanced Latin square"}


def text(report: BiasReport) -> str:
    lines: list[str] = []
    add = lines.append
    w = report.window
    add(f"council-db bias report — confidence: {report.confidence} ({w.sessions:,} sessions)")
    if w.requested:
        add(f"window asked: {w.requested}")
    add(f"window found: {found(w)} · {w.records:,} records · scale {w.scale}"
        + (f" · as of {w.as_of}" if w.as_of else ""))
    if w.sample:
        add(f"sample: record-level analyses use {w.sample.sessions:,} of the {w.sample.of:,} sessions "
            "(a fixed quasi-random sample); counts and length correlations use all")
    if report.excluded:
        add("excluded: " + ", ".join(f"{count:,} {reason}" for reason, count in sorted(report.excluded.items())))
    if report.confidence == "insufficient":
        add("")
        add(f"Collecting data: {w.sessions} sessions so far; metrics appear at 10 sessions "
            "(preliminary), 20 (moderate) and 50 (high confidence).")
        _warnings(report, add)
        return "\n".join(lines) + "\n"
    if report.confidence == "preliminary":
        add("PRELIMINARY: fewer than 20 sessions, estimates are volatile.")
    _flags(report, add)
    _reviewers(report, add)
    _position(report, add)
    _length(report, add)
    add("")
    add(f"SELF-PREFERENCE  {interval(report.self_preference)} points on own answers "
        "(joint model, pooled over reviewers)")
    add(f"AGREEMENT        Krippendorff's alpha (interval) {interval(report.agreement, signed=False)}"
        + _agreement_n(report))
    for line in ["", *reference_render.text_lines(report, interval)] if report.reference else []:
        add(line)
    _models(report, add)
    _trends(report, add)
    _anomalies(report, add)
    _pairs(report, add)
    _warnings(report, add)
    return "\n".join(lines) + "\n"


def _agreement_n(report: BiasReport) -> str:
    a = report.agreement
    if a is None:
        return ""
    return (f" over {a.units:,} answers scored by two or more reviewers ({a.n_records:,} scores, one per reviewer; "
            f"{a.n_sessions:,} sessions)")


def _flags(report: BiasReport, add) -> None:
    add("")
    if not report.flags:
        add("FLAGS  none: nothing stands out at q <= 0.05 (Benjamini-Hochberg over all tests)")
        return
    add("FLAGS  (q <= 0.05, Benjamini-Hochberg over all tests)")
    for flag in report.flags:
        add(f"  ! {flag_line(flag, gap='  ')}")


def _reviewers(report: BiasReport, add) -> None:
    if not report.reviewers:
        return
    low, high = _axis(r.severity for r in report.reviewers)
    name_width = max(len(r.reviewer_id) for r in report.reviewers)
    add("")
    add(f"REVIEWERS  severity = points vs the average reviewer (joint model); axis {low:+.1f} .. {high:+.1f}")
    add(f"  {'reviewer':<{name_width}}  {'records':>7}  {'raw mean':>8}  {'severity':<22} {'':<{BAR_WIDTH}}  "
        f"{'class':<9} {'scale SD':>8}  self-preference")
    for r in report.reviewers:
        add(f"  {r.reviewer_id:<{name_width}}  {r.records:>7,}  {_number(r.raw_mean.estimate):>8}  "
            f"{interval(r.severity):<22} {ci_bar(r.severity, low, high)}  {r.classification:<9} "
            f"{_number(r.scale_sd):>8}  {interval(r.self_preference)}")
        if r.severity_drifts:
            add(f"  {'':<{name_width}}  severity drifts (trend flagged; the {_number(r.severity.estimate, True)} "
                f"above is the window average): {recent_severity(r)}")


def recent_severity(r: ReviewerProfile) -> str:
    """'+0.38 [+0.10, +0.66] at 2026-06-01T00:00:00Z (line over 300 sessions, 1,200 records)'."""
    m = r.recent_severity
    if m is None:
        return "its recent severity cannot be estimated"
    return (f"{interval(m)} at {r.recent_severity_at} (line over {m.n_sessions:,} sessions, "
            f"{m.n_records:,} records)")


def _position(report: BiasReport, add) -> None:
    position = report.position
    if position is None:
        return
    add("")
    add(f"POSITION  display slots, 0 = shown first; {position.records_used:,} records used, "
        f"{position.records_left_out:,} left out (position not a display slot)")
    if position.designs:
        add("  design: " + ", ".join(f"{DESIGN_WORDS[d]} ({n:,} sessions)" for d, n in position.designs.items()))
    effects = {s.position: s for s in position.slot_effects}
    low, high = _axis(position.slot_effects)
    for mean in position.slot_means:
        effect = effects.get(mean.position)
        add(f"  slot {mean.position}  mean {interval(mean, signed=False):<22}  effect {interval(effect):<22} "
            f"{ci_bar(effect, low, high)}")
    if position.test is not None:
        t = position.test
        add(f"  all slots equal? F({t.df1}, {t.df2}) = {t.statistic:.2f}, p {p_value(t.p_value)}")
    if position.consistency is not None:
        c = position.consistency
        add(f"  first-shown answer wins {interval(c.first_shown_wins, signed=False)} of "
            f"{c.first_shown_wins.n_records:,} judgments (ties left out) of {c.pairs:,} pairs seen in both orders "
            f"({c.pattern})")
    if position.disagreement:
        add(f"  ! {position.disagreement}")
    if position.swaps is not None:
        add(f"  swapped pairs (one reviewer, both orders, one session): {_swaps(position.swaps)}")
    _position_by_reviewer(position, add)


def _swaps(swaps: SwapConsistency) -> str:
    return (f"{swaps.swaps:,}; same preference in both orders {interval(swaps.consistent, signed=False)}; "
            f"primacy {swaps.primacy:,}, recency {swaps.recency:,}, one tie {swaps.one_tie:,}; "
            f"flipped towards the first shown {interval(swaps.first_preferred, signed=False)}")


def _position_by_reviewer(position: Position, add) -> None:
    """Each reviewer's slot effects (its own joint model), first-shown wins and swaps."""
    if not position.by_reviewer:
        return
    width = max(len(row.reviewer_id) for row in position.by_reviewer)
    add("  by reviewer: first slot's effect vs its average slot (its own scores), all its slots equal?, "
        "first-shown wins")
    for row in position.by_reviewer:
        first = row.slot_effects[0] if row.slot_effects else None
        slots = (f"slot {first.position} {interval(first):<22}" if first is not None
                 else f"{'not identified (each candidate in one slot)':<29}")
        test = f"p {p_value(row.test.p_value):<6}" if row.test is not None else f"{'p n/a':<8}"
        wins = row.first_shown_wins
        add(f"    {row.reviewer_id:<{width}}  {slots}  {test}  first shown "
            + (f"{interval(wins, signed=False)} of {wins.n_records:,}" if wins is not None else "n/a"))
        if row.swaps is not None:
            add(f"    {'':<{width}}  swapped pairs: {_swaps(row.swaps)}")


def _length(report: BiasReport, add) -> None:
    length = report.length
    if length is None:
        return
    add("")
    add("LENGTH (verbosity)")
    how = ("CI from resampling whole sessions" if "bootstrap" in (length.headline_method or "")
           else "cluster-robust CI over all sessions")
    add(f"  headline  within-session r {interval(length.headline)}  ({how})")
    add(f"  adjusted  {interval(length.adjusted_effect)} points per SD of log length (joint model, within model)")
    add(f"  naive     pooled r {interval(length.naive_pooled_r)}  (llm-council's method: CI far too narrow)")
    add(f"  meta      fixed-effect r {interval(length.fixed_effect_r)}, random-effects r "
        f"{interval(length.random_effects_r)}")
    if length.heterogeneity is not None:
        h = length.heterogeneity
        add(f"            Q = {h.q:.1f} (df {h.df}), I² = {h.i2 * 100:.0f}%, tau² = {h.tau2:.3f}, "
            f"{h.sessions_used:,} sessions used, {h.sessions_dropped:,} dropped")
    if length.disagreement:
        add(f"  note: {length.disagreement}")


def _models(report: BiasReport, add) -> None:
    if not report.models:
        return
    add("")
    add("CANDIDATES  quality = points vs the average candidate (joint model)")
    width = max(len(m.model_id) for m in report.models)
    for m in report.models:
        add(f"  {m.model_id:<{width}}  {m.records:>7,}  {interval(m.quality)}")


def _trends(report: BiasReport, add) -> None:
    if not report.trends:
        return
    add("")
    unit, short = trend_unit(report)
    add(f"TRENDS  joint-model residuals over time: {unit} vs the typical other subject")
    width = max(len(t.subject) for t in report.trends)
    for t in report.trends:
        shown, own_span = trend_figure(t, short)
        changes = "; ".join(f"change from {c.at} ({c.shift:+.2f}, q {p_value(c.q_value)})" for c in t.change_points)
        add(f"  {t.kind:<8} {t.subject:<{width}}  {interval(shown):<22}  " + (f"{own_span}  " if own_span else "")
            + f"change search p {p_value(t.change_search_p_value)}" + (f"  {changes}" if changes else ""))


def _anomalies(report: BiasReport, add) -> None:
    add("")
    if not report.anomalies:
        add("ANOMALOUS SESSIONS  none at q <= 0.05")
        return
    add(f"ANOMALOUS SESSIONS  {len(report.anomalies)} at q <= 0.05 (bias-report --exclude-anomalies leaves them out)")
    for a in report.anomalies:
        add(f"  {a.session_id}  p {p_value(a.p_value)}  q {p_value(a.q_value)}  {a.reason}")


def _pairs(report: BiasReport, add) -> None:
    flagged = {f.subject for f in report.flags if f.kind == "affinity"}
    if report.affinity:
        add("")
        mirrored = [cell for cell in report.affinity if cell.mirror_of is not None]
        add(f"AFFINITY  reviewer x candidate mean residual: {len(report.affinity)} pairs"
            + (f" ({len(mirrored)} the mirror image of another, tested once)" if mirrored else "")
            + f", {len(flagged)} flagged (council-db bias-report --format json lists every pair)")
        for cell in report.affinity:
            label = f"{cell.reviewer_id} -> {cell.model_id}"
            if label in flagged:
                add(f"  {label}  {interval(cell.residual_mean)}"
                    + "".join(f"  (mirror: {c.reviewer_id} -> {c.model_id} {interval(c.residual_mean)})"
                              for c in mirrored if c.mirror_of == label))
    if report.anchoring:
        add("")
        add("ANCHORING  pull of the first-shown answer's score on the others, beyond the last-shown one's")
        for a in report.anchoring:
            add(f"  {a.reviewer_id or 'all reviewers':<28}  {interval(a.effect)}")
    consistency = report.self_consistency
    if consistency is not None and consistency.measurable:
        add("")
        add(f"SELF-CONSISTENCY  {consistency.note}")
        same = consistency.identical_share
        if same is not None:
            add(f"  all reviewers  {consistency.pairs:,} pairs  identical {interval(same, False)}  "
                f"mean |difference| {interval(consistency.mean_abs_difference, False)}  ({same.n_sessions:,} sessions)")
        for r in consistency.reviewers:
            add(f"  {r.reviewer_id}  {r.pairs:,} pairs  mean |difference| {interval(r.mean_abs_difference, False)}")


def _warnings(report: BiasReport, add) -> None:
    if report.warnings:
        add("")
        add("WARNINGS")
        for warning in report.warnings:
            add(f"  - {warning}")


def _markdown_position_by_reviewer(position: Position) -> list[str]:
    out = ["", f"**{position.disagreement}**"] if position.disagreement else []
    if position.swaps is not None:
        out += ["", f"Swapped pairs: {_swaps(position.swaps)}."]
    if position.by_reviewer:
        out += ["", "| reviewer | first slot's effect (own scores) | all slots equal, p | first-shown wins | "
                "swaps: same preference / primacy / recency |", "|---|---|---|---|---|"]
        for row in position.by_reviewer:
            swaps = row.swaps
            first = interval(row.slot_effects[0]) if row.slot_effects else 'n/a'
            out.append(f"| {markdown_text(row.reviewer_id)} | {first} | "
                       f"{p_value(row.test.p_value) if row.test else 'n/a'} | "
                       f"{interval(row.first_shown_wins, signed=False)} | "
                       + (f"{interval(swaps.consistent, signed=False)} / {swaps.primacy} / {swaps.recency} |"
                          if swaps else "n/a |"))
    return out


def markdown(report: BiasReport) -> str:
    w = report.window
    out = [f"# Bias report ({report.confidence} confidence)", ""]
    if w.requested:
        out.append(f"Window asked: {w.requested}.  ")
    out += [f"Window found: {found(w)}, {w.records:,} records, scale {w.scale}"
            + (f", as of {w.as_of}" if w.as_of else "") + "."
            + (f" Record-level analyses use a sample of {w.sample.sessions:,} sessions." if w.sample else ""), ""]
    if report.confidence == "insufficient":
        out.append("Collecting data: no metrics below 10 sessions.")
    else:
        out += ["## Flags", ""]
        out += [f"- {markdown_text(flag_line(f))}" for f in report.flags] or ["None."]
        out += ["", "## Reviewers", "",
                "| reviewer | records | raw mean | severity | class | scale SD | self-preference |",
                "|---|---:|---:|---|---|---:|---|"]
        out += [f"| {markdown_text(r.reviewer_id)} | {r.records:,} | {_number(r.raw_mean.estimate)} | "
                f"{interval(r.severity)}"
                + (f" (window average; drifts: {recent_severity(r)})" if r.severity_drifts else "")
                + f" | {r.classification} | {_number(r.scale_sd)} | {interval(r.self_preference)} |"
                for r in report.reviewers]
        if report.position is not None:
            effects = {s.position: s for s in report.position.slot_effects}
            out += ["", "## Position", "", "| slot | mean | effect |", "|---:|---|---|"]
            out += [f"| {m.position} | {interval(m, signed=False)} | {interval(effects.get(m.position))} |"
                    for m in report.position.slot_means]
            out += _markdown_position_by_reviewer(report.position)
        if report.length is not None:
            length = report.length
            out += ["", "## Length", "", "| estimator | value |", "|---|---|",
                    f"| within-session r (headline) | {interval(length.headline)} |",
                    f"| joint model, points per SD of log length | {interval(length.adjusted_effect)} |",
                    f"| naive pooled r (llm-council) | {interval(length.naive_pooled_r)} |",
                    f"| fixed-effect r | {interval(length.fixed_effect_r)} |",
                    f"| random-effects r | {interval(length.random_effects_r)} |"]
        unit, short = trend_unit(report)
        out += ["", "## Trends", "", f"| subject | {unit} | change points |", "|---|---|---|"]
        rows = [(t, *trend_figure(t, short)) for t in report.trends]
        out += [f"| {t.kind} {markdown_text(t.subject)} | {interval(shown)}{f' {own_span}' if own_span else ''} | "
                f"{', '.join(c.at for c in t.change_points) or 'none'} |" for t, shown, own_span in rows]
        out += ["", "## Anomalous sessions", ""]
        out += [f"- {markdown_text(a.session_id)}: {markdown_text(a.reason)} "
                f"(p {p_value(a.p_value)}, q {p_value(a.q_value)})"
                for a in report.anomalies] or ["None."]
        out += ["", f"Self-preference (pooled): {interval(report.self_preference)}.",
                f"Agreement (Krippendorff's alpha, interval): {interval(report.agreement, signed=False)}."]
        out += reference_render.markdown_lines(report, interval)
    if report.warnings:
        out += ["", "## Warnings", ""] + [f"- {markdown_text(warning)}" for warning in report.warnings]
    return "\n".join(out) + "\n"
