"""The bias report for people: plain text for a terminal (readable in a minute, with small
CI charts on a shared axis; 80 columns unless --wide: ``text_layout``) and Markdown for pull
requests and wikis."""

from __future__ import annotations

import math

from council_db.counted_text import counted
from council_db.markdown_text import markdown_text
from council_db.report import hierarchical_render, pairwise_render, reference_render, stability_render
from council_db.report.model import BiasReport, Metric, Position, ReportWindow, ReviewerProfile, SwapConsistency
from council_db.report.p_values import flag_line, p_value
from council_db.report.text_layout import MIN_BAR, Page, aligned, axis, ci_bar, names_fit
from council_db.report.trend_units import trend_figure, trend_unit


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
    sessions = counted(w.sessions, "session")
    if not w.sessions:
        return "no sessions"
    if w.start is None:
        return f"{sessions}, none with a time"
    if w.start == w.end:
        return f"{sessions} at {w.start}" if w.sessions == 1 else f"{sessions}, all at {w.start}"
    return f"{sessions} from {w.start} to {w.end}"


DESIGN_WORDS = {"one_shuffle": "one shuffle per session", "per_reviewer": "orders per reviewer",
                "balanced": "balanced Latin square"}


def text(report: BiasReport, width: int | None = None) -> str:
    """The report for a terminal, ``width`` columns wide (``text_layout.WIDTH`` unless --wide);
    None: every table whole, each line as long as it is."""
    page = Page(width)
    add = page.add
    w = report.window
    add(f"council-db bias report — confidence: {report.confidence} ({counted(w.sessions, 'session')})")
    if w.requested:
        add(f"window asked: {w.requested}")
    add(f"window found: {found(w)} · {w.records:,} records · scale {w.scale}"
        + (f" · dimension: {w.filters['dimension']}" if "dimension" in w.filters else "")
        + (f" · as of {w.as_of}" if w.as_of else ""))
    if w.sample:
        add(f"sample: record-level analyses use {w.sample.sessions:,} of the {w.sample.of:,} sessions "
            "(chosen by a hash of each session key); counts and length correlations use all")
    if report.excluded:
        add("excluded: " + ", ".join(f"{count:,} {reason}" for reason, count in sorted(report.excluded.items())))
    if report.confidence == "insufficient":
        add("")
        add(f"Collecting data: {counted(w.sessions, 'session')} so far; metrics appear at 10 sessions "
            "(preliminary), 20 (moderate) and 50 (high confidence).")
        _warnings(report, page)
        return page.text()
    if report.confidence == "preliminary":
        add("PRELIMINARY: fewer than 20 sessions, estimates are volatile.")
    _flags(report, page)
    _reviewers(report, page)
    _position(report, page)
    for line in pairwise_render.odds_text(report):
        add(line)
    _length(report, page)
    add("")
    add(f"SELF-PREFERENCE  {pairwise_render.self_preference_line(report, interval)}")
    add(f"AGREEMENT        Krippendorff's alpha (interval) {interval(report.agreement, signed=False)}"
        + _agreement_n(report))
    if report.reference:
        add("")
        for line in reference_render.text_lines(report, interval):
            add(line)
    _models(report, page)
    _trends(report, page)
    _anomalies(report, page)
    _pairs(report, page)
    hierarchical_render.text(report.hierarchical or None, page, interval)
    _warnings(report, page)
    return page.text()


def _agreement_n(report: BiasReport) -> str:
    a = report.agreement
    if a is None:
        return ""
    return (f" over {a.units:,} answers scored by two or more reviewers ({a.n_records:,} scores, one per reviewer; "
            f"{counted(a.n_sessions, 'session')})")


def _flags(report: BiasReport, page: Page) -> None:
    page.add("")
    if not report.flags:
        page.add("FLAGS  none: nothing stands out at q <= 0.05 (Benjamini-Hochberg over all tests)")
        return
    page.add("FLAGS  (q <= 0.05, Benjamini-Hochberg over all tests)")
    for flag in report.flags:
        page.add(f"  ! {flag_line(flag, gap='  ')}")


def _reviewers(report: BiasReport, page: Page) -> None:
    """One row per reviewer: records and severity with its chart on the axis its header
    gives; --wide adds the raw mean, the class (a flag's direction), the scale SD and the
    reviewer's self-preference."""
    reviewers = report.reviewers
    if not reviewers:
        return
    low, high = axis(r.severity for r in reviewers)
    page.add("")
    page.add("REVIEWERS  severity = points vs the average reviewer (joint model)")
    severity = [pairwise_render.severity(r, interval) for r in reviewers]
    width = max(len("severity"), *map(len, severity))
    klass = max(len("class"), *(len(r.classification) for r in reviewers))

    def figures(records: str, raw: str, severe: str, chart: str, kind: str, sd: str, own: str) -> str:
        extra = [f"{kind:<{klass}}", f"{sd:>8}", own] if page.wide else []
        return "  ".join([f"{records:>7}", *([f"{raw:>8}"] if page.wide else []), f"{severe:<{width}} {chart}",
                          *extra])

    used = len(figures("", "", "", "", "", "", ""))
    names = ["reviewer", *(r.reviewer_id for r in reviewers)]
    one_line = names_fit(names, 2, used + MIN_BAR, page.width)
    cells = page.bar(used + (2 + max(map(len, names)) + 2 if one_line else 4))
    ends = f"{low:+.1f}", f"{high:+.1f}"
    header = ("reviewer", figures("records", "raw mean", "severity", f"{ends[0]:<{cells - len(ends[1])}}{ends[1]}",
                                  "class", "scale SD", "self-preference"))
    rows = [(r.reviewer_id, figures(f"{r.records:,}", _number(r.raw_mean.estimate), shown,
                                    ci_bar(r.severity, low, high, cells), r.classification, _number(r.scale_sd),
                                    pairwise_render.self_preference(r, interval)))
            for r, shown in zip(reviewers, severity)]
    drifts = [[f"    severity drifts (trend flagged; the {_number(r.severity.estimate, True)} above is the window "
               f"average): {recent_severity(r)}"] if r.severity_drifts else [] for r in reviewers]
    page.rows([header, *rows], 2, after=[[], *drifts])
    if not page.wide:
        page.add("  (--wide adds each reviewer's raw mean, class, scale SD and self-preference)")


def recent_severity(r: ReviewerProfile) -> str:
    """'+0.38 [+0.10, +0.66] at 2026-06-01T00:00:00Z (line over 300 sessions, 1,200 records)'."""
    m = r.recent_severity
    if m is None:
        return "its recent severity cannot be estimated"
    return (f"{interval(m)} at {r.recent_severity_at} (line over {counted(m.n_sessions, 'session')}, "
            f"{m.n_records:,} records)")


def _position(report: BiasReport, page: Page) -> None:
    position = report.position
    if position is None:
        return
    add = page.add
    add("")
    add(f"POSITION  display slots, 0 = shown first; {position.records_used:,} records used, "
        f"{position.records_left_out:,} left out (position not a display slot)")
    if position.designs:
        add("  design: " + ", ".join(f"{DESIGN_WORDS[d]} ({counted(n, 'session')})" for d, n in position.designs.items()))
    effects = {s.position: s for s in position.slot_effects}
    low, high = axis(position.slot_effects)
    means = 22 if page.wide else max((len(interval(m, signed=False)) for m in position.slot_means), default=0)
    shifts = 22 if page.wide else max((len(interval(effects.get(m.position))) for m in position.slot_means), default=0)
    for mean in position.slot_means:
        effect = effects.get(mean.position)
        line = f"  slot {mean.position}  mean {interval(mean, signed=False):<{means}}  effect {interval(effect):<{shifts}} "
        add(line + ci_bar(effect, low, high, page.bar(len(line))))
    if position.test is not None:
        t = position.test
        add(f"  all slots equal? F({t.df1:,}, {t.df2:,}) = {t.statistic:.2f}, p {p_value(t.p_value)}")
    if position.consistency is not None:
        c = position.consistency
        add(f"  first-shown answer wins {interval(c.first_shown_wins, signed=False)} of "
            f"{c.first_shown_wins.n_records:,} judgments (ties left out) of {c.pairs:,} pairs seen in both orders "
            f"({c.pattern})")
    if position.disagreement:
        add(f"  ! {position.disagreement}")
    if position.swaps is not None:
        add(f"  swapped pairs (one reviewer, both orders, one session): {_swaps(position.swaps)}")
    _position_by_reviewer(position, page)


def _swaps(swaps: SwapConsistency) -> str:
    return (f"{swaps.swaps:,}; same preference in both orders {interval(swaps.consistent, signed=False)}; "
            f"primacy {swaps.primacy:,}, recency {swaps.recency:,}, one tie {swaps.one_tie:,}; "
            f"flipped towards the first shown {interval(swaps.first_preferred, signed=False)}")


def _position_by_reviewer(position: Position, page: Page) -> None:
    """Each reviewer's slot effects (its own joint model), first-shown wins and swaps."""
    if not position.by_reviewer:
        return
    page.add("  by reviewer: first slot's effect vs its average slot (its own scores), all its slots equal?, "
             "first-shown wins")
    cells = []
    for row in position.by_reviewer:
        first = row.slot_effects[0] if row.slot_effects else None
        wins = row.first_shown_wins
        cells.append([f"slot {first.position} {interval(first)}" if first is not None
                      else "not identified (each candidate in one slot)",
                      f"p {p_value(row.test.p_value) if row.test is not None else 'n/a'}",
                      "first shown " + (f"{interval(wins, signed=False)} of {wins.n_records:,}" if wins else "n/a")])
    rows = [(row.reviewer_id, figures) for row, figures in zip(position.by_reviewer, aligned(cells))]
    page.rows(rows, 4, after=[[f"      swapped pairs: {_swaps(row.swaps)}"] if row.swaps else []
                              for row in position.by_reviewer])


def _length(report: BiasReport, page: Page) -> None:
    length = report.length
    if length is None:
        return
    add = page.add
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
        add(f"            Q = {h.q:,.1f} (df {h.df:,}), I² = {h.i2 * 100:.0f}%, tau² = {h.tau2:.3f}, "
            f"{counted(h.sessions_used, 'session')} used, {h.sessions_dropped:,} dropped")
    if length.disagreement:
        add(f"  note: {length.disagreement}")


def _models(report: BiasReport, page: Page) -> None:
    if not report.models:
        return
    page.add("")
    page.add("CANDIDATES  quality = points vs the average candidate (joint model)")
    page.rows([(m.model_id, f"{m.records:>7,}  {interval(m.quality)}") for m in report.models], 2)


def _trends(report: BiasReport, page: Page) -> None:
    """One row per subject; at 80 columns "change p" stands for "change search p", said once."""
    unidentified = pairwise_render.reviewer_trends(report)
    if not report.trends:
        for line in ["", f"TRENDS  {unidentified}"] if unidentified else []:
            page.add(line)
        return
    page.add("")
    unit, short = trend_unit(report)
    search = "change search p" if page.wide else "change p"
    page.add(f"TRENDS  joint-model residuals over time: {unit} vs the typical other subject"
             + ("" if page.wide else "; change p: the change-point search's"))
    figures = [(t, *trend_figure(t, short)) for t in report.trends]
    column = 22 if page.wide else max(len(interval(shown)) for _, shown, _ in figures)
    rows = []
    for t, shown, own_span in figures:
        changes = "; ".join(f"change from {c.at} ({c.shift:+.2f}, q {p_value(c.q_value)})" for c in t.change_points)
        rows.append((f"{t.kind:<8} {t.subject}", f"{interval(shown):<{column}}  " + (f"{own_span}  " if own_span else "")
                     + f"{search} {p_value(t.change_search_p_value)}" + (f"  {changes}" if changes else "")))
    page.rows(rows, 2)
    if unidentified:
        page.add(f"  {unidentified}")


def _anomalies(report: BiasReport, page: Page) -> None:
    page.add("")
    if not report.anomalies:
        page.add("ANOMALOUS SESSIONS  none at q <= 0.05")
        return
    page.add(f"ANOMALOUS SESSIONS  {len(report.anomalies):,} at q <= 0.05 (bias-report --exclude-anomalies leaves "
             "them out)")
    page.rows([(a.session_id, f"p {p_value(a.p_value)}  q {p_value(a.q_value)}  {a.reason}")
               for a in report.anomalies], 2)


def _pairs(report: BiasReport, page: Page) -> None:
    add = page.add
    flagged = {f.subject for f in report.flags if f.kind == "affinity"}
    if report.affinity:
        add("")
        mirrored = [cell for cell in report.affinity if cell.mirror_of is not None]
        add(f"AFFINITY  reviewer x candidate mean residual: {counted(len(report.affinity), 'pair')}"
            + (f" ({len(mirrored):,} the mirror image of another, tested once)" if mirrored else "")
            + f", {len(flagged):,} flagged (council-db bias-report --format json lists every pair)")
        for cell in report.affinity:
            label = f"{cell.reviewer_id} -> {cell.model_id}"
            if label in flagged:
                add(f"  {label}  {interval(cell.residual_mean)}"
                    + "".join(f"  (mirror: {c.reviewer_id} -> {c.model_id} {interval(c.residual_mean)})"
                              for c in mirrored if c.mirror_of == label))
    if report.anchoring:
        add("")
        add("ANCHORING  pull of the first-shown answer's score on the others, beyond the last-shown one's")
        page.rows([(a.reviewer_id or "all reviewers", interval(a.effect)) for a in report.anchoring], 2)
    stability_render.text(report.self_consistency, page, interval, counted)


def _warnings(report: BiasReport, page: Page) -> None:
    if report.warnings:
        page.add("")
        page.add("WARNINGS")
        for warning in report.warnings:
            page.add(f"  - {warning}")


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
                       + (f"{interval(swaps.consistent, signed=False)} / {swaps.primacy:,} / {swaps.recency:,} |"
                          if swaps else "n/a |"))
    return out


def markdown(report: BiasReport) -> str:
    w = report.window
    out = [f"# Bias report ({report.confidence} confidence)", ""]
    if w.requested:
        out.append(f"Window asked: {w.requested}.  ")
    out += [f"Window found: {found(w)}, {w.records:,} records, scale {w.scale}"
            + (f", dimension: {markdown_text(str(w.filters['dimension']))}" if "dimension" in w.filters else "")
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
                f"{pairwise_render.severity(r, interval)}"
                + (f" (window average; drifts: {recent_severity(r)})" if r.severity_drifts else "")
                + f" | {r.classification} | {_number(r.scale_sd)} | "
                f"{pairwise_render.self_preference(r, interval)} |"
                for r in report.reviewers]
        if report.position is not None:
            effects = {s.position: s for s in report.position.slot_effects}
            out += ["", "## Position", "", "| slot | mean | effect |", "|---:|---|---|"]
            out += [f"| {m.position} | {interval(m, signed=False)} | {interval(effects.get(m.position))} |"
                    for m in report.position.slot_means]
            out += _markdown_position_by_reviewer(report.position)
        out += pairwise_render.odds_markdown(report)
        if report.length is not None:
            length = report.length
            out += ["", "## Length", "", "| estimator | value |", "|---|---|",
                    f"| within-session r (headline) | {interval(length.headline)} |",
                    f"| joint model, points per SD of log length | {interval(length.adjusted_effect)} |",
                    f"| naive pooled r (llm-council) | {interval(length.naive_pooled_r)} |",
                    f"| fixed-effect r | {interval(length.fixed_effect_r)} |",
                    f"| random-effects r | {interval(length.random_effects_r)} |"]
        unit, short = trend_unit(report)
        out += ["", "## Trends", ""]
        if report.not_identified is not None:
            out += [f"Reviewers (drift of severity): {report.not_identified.label}.", ""]
        out += [f"| subject | {unit} | change points |", "|---|---|---|"]
        rows = [(t, *trend_figure(t, short)) for t in report.trends]
        out += [f"| {t.kind} {markdown_text(t.subject)} | {interval(shown)}{f' {own_span}' if own_span else ''} | "
                f"{', '.join(c.at for c in t.change_points) or 'none'} |" for t, shown, own_span in rows]
        out += ["", "## Anomalous sessions", ""]
        out += [f"- {markdown_text(a.session_id)}: {markdown_text(a.reason)} "
                f"(p {p_value(a.p_value)}, q {p_value(a.q_value)})"
                for a in report.anomalies] or ["None."]
        out += ["", f"Self-preference (pooled): {pairwise_render.self_preference(report, interval)}.",
                f"Agreement (Krippendorff's alpha, interval): {interval(report.agreement, signed=False)}."]
        out += reference_render.markdown_lines(report, interval)
        out += stability_render.markdown_lines(report.self_consistency, interval)
        out += hierarchical_render.markdown_lines(report.hierarchical or None, interval)
    if report.warnings:
        out += ["", "## Warnings", ""] + [f"- {markdown_text(warning)}" for warning in report.warnings]
    return "\n".join(out) + "\n"
