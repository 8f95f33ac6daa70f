"""The section "Against the reference" for people: text lines within 80 columns, Markdown and
HTML tables. Every figure is shown with its 95% CI and the sessions it rests on; the window is
the report's. ``interval`` is render.interval (passed in: render imports this module)."""

from __future__ import annotations

import textwrap
from html import escape
from typing import Callable, Sequence

from council_db.markdown_text import markdown_text
from council_db.report.model import BiasReport, ReviewerProfile
from council_db.report.p_values import p_value
from council_db.report.reference_model import FamilyFigures, GoldFigures, JudgeReference, ReferenceOverview

Interval = Callable[..., str]
WIDTH = 80
TITLE = "Against the reference"
READING = ("agreement: the judge's verdict on two answers (which is better, or a tie) against the raters' strict "
           "majority; S1 keeps ties (chance 1/3), S2 drops pairs either side called a tie (chance 1/2). 'vs the "
           "raters' own agreement' is the judge's agreement with single raters minus the raters' with each other "
           "(the human ceiling; one-sided p, in the one Benjamini-Hochberg family).")


def judged(report: BiasReport) -> list[tuple[ReviewerProfile, JudgeReference]]:
    return [(r, r.reference) for r in report.reviewers if r.reference is not None]


def _who(reference: ReferenceOverview) -> str:
    raters = ", ".join(reference.raters[:4]) + (f" and {len(reference.raters) - 4} more"
                                                  if len(reference.raters) > 4 else "")
    kind = "human rater" if reference.kind == "human" else "gold label"
    return (f"{len(reference.raters)} {kind}{'s' if len(reference.raters) != 1 else ''} ({raters}) on "
            f"{reference.sessions:,} of the window's sessions ({reference.items:,} items, the CIs' clusters)")


def _n(metric) -> str:
    return f"{metric.n_sessions:,} sessions" if metric is not None else "no sessions"


def _family(reference: JudgeReference) -> FamilyFigures | None:
    return reference.pairwise if reference.family == "pairwise" else reference.pointwise


def text_lines(report: BiasReport, interval: Interval) -> list[str]:
    """The section as text lines (none without a reference), each within 80 columns."""
    reference = report.reference
    if reference is None:
        return []
    out = [f"AGAINST THE REFERENCE  {_who(reference)}"]
    if reference.no_majority:
        out.append(f"{reference.no_majority:,} answer pairs without a strict majority of raters: left out")
    if reference.agreement is not None:
        out.append(f"raters among themselves: agreement {interval(reference.agreement, False)}, kappa "
                   f"{interval(reference.kappa, False)} ({_n(reference.agreement)})")
    for profile, found in judged(report):
        out.append(f"  {profile.reviewer_id} ({found.family} sessions)")
        out += [f"    {line}" for line in _judge_lines(found, interval)]
    out.append(READING)
    return [wrapped for line in out for wrapped in _wrap(line)]


def _wrap(line: str) -> list[str]:
    indent = " " * (len(line) - len(line.lstrip()) + 2)
    return textwrap.wrap(line, WIDTH, subsequent_indent=indent, break_on_hyphens=False) or [""]


def _judge_lines(found: JudgeReference, interval: Interval) -> list[str]:
    family = _family(found)
    out = []
    if family is not None:
        verdicts = family.with_reference
        out.append(f"S1 agreement {interval(verdicts.agreement, False)}, kappa "
                   f"{interval(verdicts.kappa, False)}, {_n(verdicts.agreement)}")
        out.append(f"S2 agreement {interval(verdicts.agreement_without_ties, False)}, kappa "
                   f"{interval(verdicts.kappa_without_ties, False)}, {_n(verdicts.agreement_without_ties)}")
        if family.below_ceiling is not None:
            out.append(f"vs the raters' own agreement: {interval(family.below_ceiling)}, p "
                       f"{p_value(family.below_ceiling.p_value)} ({_n(family.below_ceiling)})")
        if family.alpha is not None:
            out.append(f"on the scale: alpha {interval(family.alpha, False)}, judge minus raters "
                       f"{interval(family.mean_difference)} points")
        if family.replacement is not None:
            out.append(_replacement(family))
    if found.gold is not None:
        out.append(_gold_line(found.gold, interval))
    biases = [(f"length {interval(c.difference)}", c.difference) for c in [found.length] if c and c.difference]
    biases += [(f"first slot {interval(c.difference)}", c.difference) for c in [found.first_slot]
               if c and c.difference]
    if biases:
        out.append("vs the raters' own effect: " + ", ".join(words for words, _ in biases) + " points")
    if found.reasoning_chain is not None:
        out.append(f"longer wrong answers pull its verdict: {interval(found.reasoning_chain)} per SD of log "
                   f"length ({_n(found.reasoning_chain)})")
    return out


VERDICT = {True: "could replace a rater", False: "could not replace a rater", None: "no rater testable"}


def _replacement(family: FamilyFigures) -> str:
    test = family.replacement
    if test.passed is None:
        return (f"{VERDICT[None]}: {test.humans_skipped} humans rated too few of the {test.instances:,} instances "
                "for the alternative annotator test")
    return (f"{VERDICT[test.passed]}: beats {round((test.winning_rate or 0) * test.humans_tested)} of "
            f"{test.humans_tested} humans (alternative annotator test, epsilon {test.epsilon:g}, "
            f"{test.instances:,} instances)")


def _gold_line(gold: GoldFigures, interval: Interval) -> str:
    return (f"gold: accuracy {interval(gold.accuracy, False)} ({gold.accuracy.count}/{gold.accuracy.of}); "
            f"listed {_share(gold.accuracy_listed)}, swapped {_share(gold.accuracy_swapped)}, both "
            f"{_share(gold.both_correct)}, same verdict {_share(gold.same_verdict)}, net "
            f"{_share(gold.net_correct)}; {gold.labelled:,} labelled pairs, {gold.unjudged} unjudged")


def _share(share) -> str:
    return f"{share.count}/{share.of}"


def tables(report: BiasReport, interval: Interval) -> list[tuple[str, list[str], list[list[str]]]]:
    """The section as (caption, header, rows) tables, for Markdown and HTML."""
    out = []
    rows = [[p.reviewer_id, r.family, interval(r.agreement, False), interval(r.kappa, False),
             interval(_family(r).with_reference.agreement_without_ties, False) if _family(r) else "n/a",
             interval(_family(r).below_ceiling) if _family(r) else "n/a",
             VERDICT[_family(r).replacement.passed] if _family(r) and _family(r).replacement else "not tested",
             _n(r.agreement)] for p, r in judged(report)]
    if rows:
        out.append(("Agreement with the reference's majority", ["judge", "sessions of", "agreement (S1)",
                    "kappa (S1)", "agreement (S2)", "vs the raters' own agreement", "replace a rater?", "n"], rows))
    gold = [[p.reviewer_id, interval(g.accuracy, False), *(_share(s) for s in (g.accuracy_listed, g.accuracy_swapped,
             g.both_correct, g.same_verdict, g.net_correct)), str(g.unjudged), _n(g.accuracy)]
            for p, r in judged(report) if (g := r.gold) is not None]
    if gold:
        out.append(("Accuracy against gold labels", ["judge", "accuracy", "listed order", "swapped order",
                    "both correct", "same verdict", "net (JudgeBench)", "unjudged", "n"], gold))
    biases = [[p.reviewer_id, interval(r.length.difference if r.length else None),
               interval(r.first_slot.difference if r.first_slot else None), interval(r.reasoning_chain),
               interval(r.self_preference.excess if r.self_preference else None)] for p, r in judged(report)]
    if biases:
        out.append(("Biases against the reference (the judge's minus the raters')", ["judge", "length, per SD",
                    "first slot", "reasoning chain", "self-preference excess"], biases))
    return out


def _intro(report: BiasReport, interval: Interval) -> list[str]:
    reference = report.reference
    out = [f"Reference: {_who(reference)}."]
    if reference.agreement is not None:
        out.append(f"Raters among themselves: agreement {interval(reference.agreement, False)}, kappa "
                   f"{interval(reference.kappa, False)} ({_n(reference.agreement)}).")
    if reference.no_majority:
        out.append(f"{reference.no_majority:,} answer pairs without a strict majority of raters are left out.")
    return out + [READING[0].upper() + READING[1:]]


def markdown_lines(report: BiasReport, interval: Interval) -> list[str]:
    if report.reference is None:
        return []
    out = ["", f"## {TITLE}"]
    for line in _intro(report, interval):
        out += ["", markdown_text(line)]
    for caption, header, rows in tables(report, interval):
        out += ["", f"**{markdown_text(caption)}**", "", _md_row(header), "|" + "---|" * len(header)]
        out += [_md_row(row) for row in rows]
    return out


def _md_row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(markdown_text(c) for c in cells) + " |"


def html(report: BiasReport, interval: Interval) -> str:
    if report.reference is None:
        return ""
    out = [f'<section id="reference"><h2>{TITLE}</h2>']
    out += [f'<p class="note">{escape(line)}</p>' for line in _intro(report, interval)]
    for caption, header, rows in tables(report, interval):
        out.append(f"<table><caption>{escape(caption)}</caption><tr>"
                   + "".join(f"<th>{escape(h)}</th>" for h in header) + "</tr>"
                   + "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>" for row in rows)
                   + "</table>")
    return "".join(out) + "</section>"
