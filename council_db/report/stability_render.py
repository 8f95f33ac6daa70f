"""Test-retest and repeat stability for people: the text report's SELF-CONSISTENCY section
(``text``), and its Markdown and HTML tables. Every figure with its 95% CI and the sessions it
rests on; the window is the report's. ``interval`` and ``counted`` are render's (passed in:
render imports this module)."""

from __future__ import annotations

from html import escape
from typing import Callable

from council_db.markdown_text import markdown_text
from council_db.report.stability_model import JudgeStability, RepeatStability, SelfConsistency
from council_db.report.text_layout import Page

Interval = Callable[..., str]
TEXT_ITEMS = 3  # least stable items per judge in the text report (JSON, Markdown, HTML: all of them)
READING = ("per item: the share of answers whose repeats are identical, within 1 point, the same verdict "
           "(pass: above {threshold:g}); ICC(1): the share of score variance between answers, not repeats; "
           "pass^k: the chance k repeats all pass")


def _k(judge: JudgeStability) -> str:
    return ", ".join(f"k={k}: {n:,}" for k, n in judge.repeats.items())


def _figures(judge: JudgeStability, interval: Interval) -> list[tuple[str, str]]:
    """(label, figure) in the order every format shows them."""
    return [("identical", interval(judge.identical, False)),
            ("within 1 point", interval(judge.within_one_point, False)),
            ("same verdict", interval(judge.same_verdict, False)),
            ("within-item SD", interval(judge.within_item_sd, False)),
            ("ICC(1)", interval(judge.reliability, False)),
            (f"pass^{judge.pass_k}", interval(judge.pass_hat_k, False)),
            ("all pass if one does", interval(judge.all_pass_given_any, False))]


def _sessions(judge: JudgeStability) -> int:
    return judge.identical.n_sessions if judge.identical is not None else 0


def _least_stable(judge: JudgeStability) -> list[str]:
    return [f"{item.session_id} {item.model_id}: {', '.join(f'{s:g}' for s in item.scores)}"
            for item in judge.least_stable]


def text(consistency: SelfConsistency | None, page: Page, interval: Interval, counted: Callable) -> None:
    """The section, when any reviewer scored an answer twice."""
    if consistency is None or not consistency.measurable:
        return
    add = page.add
    add("")
    add(f"SELF-CONSISTENCY  {consistency.note}")
    same = consistency.identical_share
    if same is not None:
        add(f"  all reviewers  {counted(consistency.pairs, 'pair')}  identical {interval(same, False)}  "
            f"mean |difference| {interval(consistency.mean_abs_difference, False)}  "
            f"({counted(same.n_sessions, 'session')})")
    page.rows([(r.reviewer_id, f"{counted(r.pairs, 'pair')}  mean |difference| "
                f"{interval(r.mean_abs_difference, False)}") for r in consistency.reviewers], 2)
    stability: RepeatStability | None = consistency.stability
    if stability is None:
        return
    add("")
    add(f"REPEAT STABILITY  {READING.format(threshold=stability.pass_threshold)}")
    for judge in stability.judges:
        add(f"  {judge.reviewer_id}  {counted(judge.items, 'item')} scored again ({_k(judge)}), "
            f"{counted(_sessions(judge), 'session')}")
        add("    " + "  ".join(f"{label} {figure}" for label, figure in _figures(judge, interval)))
        for line in _least_stable(judge)[:TEXT_ITEMS]:
            add(f"    least stable: {line}")


def markdown_lines(consistency: SelfConsistency | None, interval: Interval) -> list[str]:
    """The repeat stability table, and each judge's least stable items."""
    stability = consistency.stability if consistency is not None else None
    if stability is None:
        return []
    labels = [label for label, _ in _figures(stability.judges[0], interval)]
    out = ["", "## Repeat stability", "", READING.format(threshold=stability.pass_threshold) + ".", "",
           "| judge | items (k) | sessions | " + " | ".join(labels) + " |",
           "|---|---|---:|" + "---|" * len(labels)]
    out += [f"| {markdown_text(j.reviewer_id)} | {j.items:,} ({_k(j)}) | {_sessions(j):,} | "
            + " | ".join(figure for _, figure in _figures(j, interval)) + " |" for j in stability.judges]
    unstable = [(j.reviewer_id, line) for j in stability.judges for line in _least_stable(j)]
    if unstable:
        out += ["", "Least stable items (session, candidate: scores):", ""]
        out += [f"- {markdown_text(who)}: {markdown_text(line)}" for who, line in unstable]
    return out


def html(consistency: SelfConsistency | None, interval: Interval) -> str:
    """The repeat stability table as HTML (empty without repeats)."""
    stability = consistency.stability if consistency is not None else None
    if stability is None:
        return ""
    head = "".join(f"<th>{escape(label)}</th>" for label, _ in _figures(stability.judges[0], interval))
    rows = "".join(
        f"<tr><td>{escape(j.reviewer_id)}</td><td>{j.items:,} ({escape(_k(j))})</td><td>{_sessions(j):,}</td>"
        + "".join(f"<td>{escape(figure)}</td>" for _, figure in _figures(j, interval))
        + "<td>" + "<br>".join(escape(line) for line in _least_stable(j)) + "</td></tr>"
        for j in stability.judges)
    return (f"<h2>Repeat stability</h2><p class=\"note\">{escape(READING.format(threshold=stability.pass_threshold))}"
            f"</p><table><tr><th>judge</th><th>items (k)</th><th>sessions</th>{head}<th>least stable</th></tr>"
            f"{rows}</table>")
