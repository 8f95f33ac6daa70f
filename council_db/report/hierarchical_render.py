"""The hierarchical model's part of the text, Markdown and HTML reports (``--method bayes``):
each effect's posterior mean with its 95% credible interval and the posterior probability of
its sign, the prior (the populations' spreads, each with its n), the flags, and since when
each reviewer's severity has been stable. ``interval`` is render's (passed in: render
imports this module)."""

from __future__ import annotations

from html import escape
from typing import Callable

from council_db.markdown_text import markdown_text
from council_db.report.hierarchical_model import BayesFlag, Hierarchical, Posterior
from council_db.report.p_values import p_value
from council_db.report.text_layout import Page

Interval = Callable[..., str]
COMPONENTS = {"reviewer": ("reviewer severity", "reviewers"), "candidate": ("candidate quality", "candidates"),
              "slot": ("a reviewer's slot effect", "reviewers"),
              "length": ("a reviewer's length effect", "reviewers"),
              "self": ("a reviewer's self-preference", "reviewers"),
              "answer": ("an answer's own quality", "answers scored twice or more")}
READING = ("posterior mean [95% credible interval] and P, the posterior probability of the sign shown (a position "
           "flag's: that the slots differ); flagged where Benjamini-Hochberg over every statement's tail, "
           "2 x (1 - P) (position's 1 - P), gives q <= 0.05")


def probability(p: float) -> str:
    """'0.97', '>0.999' or '<0.001': two decimals where they say something."""
    if p > 0.999:
        return ">0.999"
    if p < 0.001:
        return "<0.001"
    return f"{p:.3f}" if p > 0.99 or p < 0.01 else f"{p:.2f}"


def signed(metric: Posterior | None, interval: Interval, above: str = "> 0", below: str = "< 0") -> str:
    """'+0.42 [+0.30, +0.55] P(> 0) 0.98': the figure and the probability of the sign it has."""
    if metric is None:
        return "n/a"
    up = metric.p_positive >= 0.5
    shown = probability(metric.p_positive if up else 1 - metric.p_positive)
    return f"{interval(metric)} P({above if up else below}) {shown}"


def prior(part: Hierarchical) -> str:
    return "; ".join(f"{COMPONENTS[s.component][0]} "
                     + (f"SD {s.sd:.2f}" if s.sd is not None else "not pooled (flat)")
                     + f" ({s.n:,} {COMPONENTS[s.component][1]})" for s in part.prior) \
        + f"; residual SD {part.residual_sd:.2f}"


def flag_line(flag: BayesFlag, interval: Interval) -> str:
    what = f"{flag.statement} reviewer {flag.subject}" if flag.kind == "reviewer_severity" else (
        f"position: {flag.subject} {flag.statement}" if flag.kind == "position" else
        f"{flag.kind.replace('_', '-')}: {flag.statement}")
    return f"{what}: P = {probability(flag.probability)} (q {p_value(flag.q_value)}), {interval(flag.metric)}"


def stable_line(part: Hierarchical) -> str:
    stable = [f"{r.reviewer_id} session {r.stable_since}" for r in part.reviewers if r.stable_since is not None]
    return ("stable since (severity within 0.5 prior SD of where it ends): " + ", ".join(stable)) if stable else \
        "stable since: not measured (no spread between reviewers' severities, or severity not estimated)"


def _position(part: Hierarchical, interval: Interval) -> str:
    return "; ".join(f"slot {s.position} {signed(s, interval)}" for s in part.position) or "n/a"


def text(part: Hierarchical | None, page: Page, interval: Interval) -> None:
    if part is None:
        return
    add = page.add
    add("")
    add(f"HIERARCHICAL MODEL  (--method bayes) {READING}")
    add(f"  prior: {prior(part)}")
    for flag in part.flags:
        add(f"  ! {flag_line(flag, interval)}")
    if not part.flags:
        add("  no flags at q <= 0.05")
    page.rows([(r.reviewer_id, f"severity {signed(r.severity, interval, 'generous', 'harsh')}  "
                f"length {interval(r.length)}  self {interval(r.self_preference)}") for r in part.reviewers], 2)
    add(f"  position (vs the average slot): {_position(part, interval)}")
    add(f"  length (per SD of log length): {signed(part.length, interval)}")
    add(f"  self-preference (pooled): {signed(part.self_preference, interval)}")
    page.rows([(m.model_id, f"quality {interval(m.quality)}") for m in part.models], 2)
    add(f"  {stable_line(part)}")


def markdown_lines(part: Hierarchical | None, interval: Interval) -> list[str]:
    if part is None:
        return []
    out = ["", "## Hierarchical model (--method bayes)", "", f"{READING.capitalize()}. Prior: {prior(part)}.", ""]
    out += [f"- {markdown_text(flag_line(f, interval))}" for f in part.flags] or ["No flags at q <= 0.05."]
    out += ["", "| reviewer | severity | length | self-preference | stable since |", "|---|---|---|---|---:|"]
    out += [f"| {markdown_text(r.reviewer_id)} | {signed(r.severity, interval, 'generous', 'harsh')} | "
            f"{signed(r.length, interval)} | {signed(r.self_preference, interval)} | "
            f"{'n/a' if r.stable_since is None else f'session {r.stable_since}'} |" for r in part.reviewers]
    out += ["", "| candidate | quality |", "|---|---|"]
    out += [f"| {markdown_text(m.model_id)} | {signed(m.quality, interval)} |" for m in part.models]
    out += ["", f"Position (vs the average slot): {_position(part, interval)}.",
            f"Length (per SD of log length): {signed(part.length, interval)}.",
            f"Self-preference (pooled): {signed(part.self_preference, interval)}."]
    return out


def html(part: Hierarchical | None, interval: Interval) -> str:
    if part is None:
        return ""
    from council_db.report import hierarchical_chart  # SVG: the HTML page alone draws it

    flags = "".join(f"<li>{escape(flag_line(f, interval))}</li>" for f in part.flags) or \
        "<li>No flags at q &lt;= 0.05.</li>"
    rows = "".join(f"<tr><td>{escape(r.reviewer_id)}</td>"
                   f"<td>{escape(signed(r.severity, interval, 'generous', 'harsh'))}</td>"
                   f"<td>{escape(signed(r.length, interval))}</td><td>{escape(signed(r.self_preference, interval))}"
                   f"</td><td>{'n/a' if r.stable_since is None else r.stable_since}</td></tr>" for r in part.reviewers)
    return (f"<h2>Hierarchical model</h2><p class=\"note\">{escape(READING)}. Prior: {escape(prior(part))}.</p>"
            f"<ul class=\"flags\">{flags}</ul><table><tr><th>reviewer</th><th>severity</th><th>length</th>"
            f"<th>self-preference</th><th>stable since session</th></tr>{rows}</table>"
            f"<p>Position (vs the average slot): {escape(_position(part, interval))}. Length (per SD of log length): "
            f"{escape(signed(part.length, interval))}. Self-preference (pooled): "
            f"{escape(signed(part.self_preference, interval))}.</p>{hierarchical_chart.severity_paths(part)}")
