"""Each rule judged on one window's bias report: one outcome per rule and subject (a reviewer,
a flag, the window), pass, fail, or skip where the report cannot measure it in this window
(and why). A figure is judged on its 95% CI by default: a floor fails when the CI's lower
bound is below it, a bound on |effect| only when the whole CI lies beyond it."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

from council_db.analysis.stats.tiers import TIERS
from council_db.contract.reviewer_identity import SEPARATOR
from council_db.gate.rules import Rule
from council_db.report.model import BiasReport, Flag

if TYPE_CHECKING:
    from council_db.analysis.loading.window import Window
    from council_db.report.model import ReportWindow
    from council_db.store.database import Database

Status = Literal["pass", "fail", "skip"]


class Figure(Protocol):
    """A report figure: the report's Metric and the reference section's ReferenceMetric alike."""

    estimate: float | None
    ci_low: float | None
    ci_high: float | None
    n_sessions: int


@dataclass(frozen=True)
class Outcome:
    rule: str
    subject: str
    status: Status
    message: str  # what was measured against what, or why it cannot be measured here
    estimate: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    n_sessions: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _ci(figure: Figure) -> str:
    return f"95% CI {figure.ci_low:.2f} to {figure.ci_high:.2f}, n {figure.n_sessions:,} sessions"


def _measured(rule: Rule, subject: str, what: str, figure: Figure | None, why_not: str, *,
              floor: bool) -> Outcome:
    """A figure against the rule's floor (or its bound on |figure|)."""
    if figure is None or figure.estimate is None:
        return Outcome(rule.name, subject, "skip", f"not measurable in this window: {why_not}")
    if rule.on == "ci" and (figure.ci_low is None or figure.ci_high is None):
        return Outcome(rule.name, subject, "skip",
                       f"not measurable in this window: {what} has no CI (judge it with on = \"estimate\")")
    limit = float(rule.limit)  # type: ignore[arg-type]
    if floor:
        judged = figure.estimate if rule.on == "estimate" else figure.ci_low
        failed = judged < limit
        test = f"{'estimate' if rule.on == 'estimate' else 'CI lower bound'} {'<' if failed else '>='} {limit:g}"
    else:
        low, high = (figure.estimate, figure.estimate) if rule.on == "estimate" else (figure.ci_low, figure.ci_high)
        failed = low > limit or high < -limit
        judged_text = "estimate" if rule.on == "estimate" else "whole CI"
        test = f"{judged_text} {'beyond' if failed else 'not beyond'} ±{limit:g}"
    text = f"{what} {figure.estimate:.2f}"
    if figure.ci_low is not None and figure.ci_high is not None:
        text += f" ({_ci(figure)})"
    else:
        text += f" (n {figure.n_sessions:,} sessions)"
    return Outcome(rule.name, subject, "fail" if failed else "pass", f"{text}: {test}", figure.estimate,
                   figure.ci_low, figure.ci_high, figure.n_sessions)


def names_reviewer(flag: Flag, reviewer: str) -> bool:
    """A flag is about a reviewer when its subject names it as one: ``id``, ``reviewer id``,
    ``id -> model`` (affinity), ``id (display slots)`` (position); never a candidate model's trend.
    ``reviewer`` is a model (each of its identities counts) or one identity's full label."""
    if flag.subject.startswith("model "):
        return False
    who = re.sub(r" \([^()]*\)\Z", "", flag.subject.split(" -> ")[0].removeprefix("reviewer "))
    return who == reviewer or who.startswith(reviewer + SEPARATOR)


def _no_flags(report: BiasReport, rule: Rule) -> list[Outcome]:
    flags = [f for f in report.flags if f.q_value <= rule.alpha and (not rule.kinds or f.kind in rule.kinds)
             and (not rule.reviewers or any(names_reviewer(f, r) for r in rule.reviewers))]
    if flags:
        return [Outcome(rule.name, f"{f.kind}: {f.subject}", "fail", f"{f.message} (q {f.q_value:.3g})",
                        f.estimate, n_sessions=report.window.sessions) for f in flags]
    which = f" of kind {', '.join(rule.kinds)}" if rule.kinds else ""
    whose = f" naming {', '.join(rule.reviewers)}" if rule.reviewers else ""
    return [Outcome(rule.name, "all flags", "pass", f"no flag{which}{whose} at q <= {rule.alpha:g} "
                    f"(n {report.window.sessions:,} sessions)", n_sessions=report.window.sessions)]


def _agreement(report: BiasReport, rule: Rule) -> list[Outcome]:
    if report.reference is None:
        return [Outcome(rule.name, "all judges", "skip",
                        "not measurable in this window: it holds no human raters' or gold labels' verdicts")]
    return [_measured(rule, p.reviewer_id, "agreement with the reference", p.reference and p.reference.agreement,
                      "the reference rated none of its answers", floor=True)
            for p in report.reviewers if p.reference is not None]


def _position_consistency(report: BiasReport, rule: Rule) -> list[Outcome]:
    swapped = [r for r in report.position.by_reviewer if r.swaps is not None] if report.position else []
    if not swapped:
        return [Outcome(rule.name, "all reviewers", "skip", "not measurable in this window: no reviewer scored "
                        "a pair of answers in both orders (a swap design)")]
    return [_measured(rule, r.reviewer_id, "position consistency", r.swaps.consistent,  # type: ignore[union-attr]
                      "its swapped pairs were all left out", floor=True) for r in swapped]


def _severity(report: BiasReport, rule: Rule) -> list[Outcome]:
    return [_measured(rule, p.reviewer_id, "severity (points vs the average reviewer)", p.severity,
                      p.severity_reason or "the joint model did not estimate it", floor=False)
            for p in report.reviewers] or [Outcome(rule.name, "all reviewers", "skip",
                                                   "not measurable in this window: it holds no reviewer's scores")]


def _length(report: BiasReport, rule: Rule) -> list[Outcome]:
    figure = report.length.adjusted_effect if report.length else None
    return [_measured(rule, "answer length", "length effect (points per SD of log length, within model)", figure,
                      "the joint model did not estimate it (too few sessions, or no answer lengths)", floor=False)]


def _retest(report: BiasReport, rule: Rule) -> list[Outcome]:
    """Repeat stability: each reviewer's mean |difference| between two scores of one answer."""
    retests = report.self_consistency
    if retests is None or not retests.reviewers:
        why = retests.note if retests is not None else "no reviewer scored an answer more than once"
        return [_no_repeats(rule, why)]
    return [_measured(rule, r.reviewer_id, "test-retest mean |difference| (points)", r.mean_abs_difference,
                      "too few answers it scored twice", floor=False) for r in retests.reviewers]


def _no_repeats(rule: Rule, why: str) -> Outcome:
    """A repeat rule skipped, saying why once (the report's note starts "not measurable: ")."""
    said = why.removeprefix("not measurable: ")
    return Outcome(rule.name, "all reviewers", "skip", f"not measurable in this window: {said}")


def _stability(report: BiasReport, rule: Rule) -> list[Outcome]:
    """Repeat stability: each judge's share of repeated items whose repeats all pass or all fail
    (the verdict a gate cares about, and a share on every scale, 0-1 and C/I grades too)."""
    consistency = report.self_consistency
    stability = consistency.stability if consistency is not None else None
    if stability is None:
        why = consistency.note if consistency is not None and not consistency.measurable else \
            "no reviewer scored an answer (session, candidate, length) more than once"
        return [_no_repeats(rule, why)]
    return [_measured(rule, j.reviewer_id, "repeat stability (share of items with the same verdict on every "
                      "repeat)", j.same_verdict, "too few answers it scored twice", floor=True)
            for j in stability.judges]


def _min_sessions(report: BiasReport, rule: Rule) -> list[Outcome]:
    n = report.window.sessions
    failed = n < int(rule.limit)  # type: ignore[arg-type]
    return [Outcome(rule.name, "window", "fail" if failed else "pass",
                    f"{n:,} sessions {'<' if failed else '>='} {rule.limit:,}", float(n), n_sessions=n)]


def _min_tier(report: BiasReport, rule: Rule) -> list[Outcome]:
    failed = TIERS.index(report.confidence) < TIERS.index(str(rule.limit))
    return [Outcome(rule.name, "window", "fail" if failed else "pass",
                    f"confidence tier {report.confidence} ({report.window.sessions:,} sessions) "
                    f"{'below' if failed else 'at or above'} {rule.limit}", n_sessions=report.window.sessions)]


JUDGES = {"no-flags": _no_flags, "agreement-min": _agreement, "position-consistency-min": _position_consistency,
          "severity-max": _severity, "length-max": _length, "retest-max": _retest, "min-sessions": _min_sessions,
          "min-tier": _min_tier, "stability-min": _stability}


def judge(report: BiasReport, rules: list[Rule]) -> list[Outcome]:
    """Every rule's outcomes, in the rules' order."""
    return [outcome for rule in rules for outcome in JUDGES[rule.name](report, rule)]


def judge_window(db: Database, window: Window, filters: dict[str, Any], rules: list[Rule], *, seed: int,
                 sample_sessions: int | None) -> tuple[ReportWindow, list[Outcome]]:
    """The window as its report states it, and every rule's outcomes on that report, built for
    the rules alone (report_for_window's ``for_rules``: the same verdicts, less to compute); a
    window without a session is a usage error. What check and watch both judge."""
    from council_db.errors import UsageError
    from council_db.report.for_window import report_for_window

    made = report_for_window(db, window, filters, seed=seed, sample_sessions=sample_sessions, for_rules=True)
    if made.report.window.sessions == 0:
        raise UsageError(made.empty_window_hint or "no session in this window: the database holds none")
    return made.report.window, judge(made.report, rules)


def exit_code(outcomes: list[Outcome]) -> int:
    """1 when any rule failed, else 0 (a skipped rule does not fail the gate)."""
    return 1 if any(o.status == "fail" for o in outcomes) else 0
