"""council-db check: the bias report's figures as a CI gate's exit code."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from council_db.cli.context import state
from council_db.cli.formats import Json, chosen, destination, format_option, output_option, wrote
from council_db.cli.window_options import (
    SAMPLE_SESSIONS,
    AsOf,
    Categories,
    Configs,
    Days,
    Dimension,
    Models,
    Reviewers,
    SampleSessions,
    Sessions,
    Since,
    Until,
    window_and_filters,
)

if TYPE_CHECKING:
    from council_db.gate.rules import Rule

FORMATS = ("text", "json", "junit", "github")  # gate.outputs.FORMATS, here so --help need not import it


def _rules(rules_file: str | None, options: dict[str, object], no_flags: bool, alpha: float | None,
           kinds: list[str], flag_reviewers: list[str], on: str | None) -> list[Rule]:
    """The rules: --rules FILE (else ./council-db.toml when there is one), with the options' rules
    in place of the file's of the same name."""
    from council_db.errors import UsageError
    from council_db.gate import rules as gate_rules

    if on is not None and on not in gate_rules.ON:
        raise UsageError(f"--on is {on!r}: give ci or estimate")
    if (alpha is not None or kinds or flag_reviewers) and not no_flags:
        raise UsageError("--alpha, --flag-kind and --flag-reviewer shape the no-flags rule: add --no-flags")
    found = []
    if rules_file is not None:
        found = gate_rules.from_file(Path(rules_file), required=True)
    elif Path(gate_rules.DEFAULT_FILE).is_file():
        found = gate_rules.from_file(Path(gate_rules.DEFAULT_FILE), required=False)
    given = [gate_rules.option_rule(name, value, f"--{name}") for name, value in options.items() if value is not None]
    if no_flags:
        given.insert(0, gate_rules.no_flags_option(alpha, kinds, flag_reviewers))
    return gate_rules.merged(found, given, on)


def command(
    ctx: typer.Context,
    sessions: Sessions = None,
    days: Days = None,
    since: Since = None,
    until: Until = None,
    as_of: AsOf = None,
    reviewer: Reviewers = None,
    model: Models = None,
    config_version: Configs = None,
    category: Categories = None,
    dimension: Dimension = None,
    rules_file: Annotated[Optional[str], typer.Option(
        "--rules", metavar="FILE", help="The rules' TOML file (its [check] table); default ./council-db.toml "
                                        "when there is one.")] = None,
    no_flags: Annotated[bool, typer.Option("--no-flags", help="Fail on any report flag at q <= --alpha.")] = False,
    alpha: Annotated[Optional[float], typer.Option(
        "--alpha", metavar="Q", help="--no-flags: only flags at q <= Q (at most 0.05, the default).")] = None,
    flag_kind: Annotated[Optional[list[str]], typer.Option(
        "--flag-kind", metavar="KIND", help="--no-flags: only flags of this kind (repeatable).")] = None,
    flag_reviewer: Annotated[Optional[list[str]], typer.Option(
        "--flag-reviewer", metavar="ID", help="--no-flags: only flags naming this reviewer: a model (each of "
        "its identities) or one identity's label (repeatable).")] = None,
    agreement_min: Annotated[Optional[float], typer.Option(
        "--agreement-min", metavar="X", help="Fail a judge whose agreement with the reference is below X.")] = None,
    position_consistency_min: Annotated[Optional[float], typer.Option(
        "--position-consistency-min", metavar="X",
        help="Fail a reviewer whose position consistency (swapped pairs) is below X.")] = None,
    severity_max: Annotated[Optional[float], typer.Option(
        "--severity-max", metavar="P", help="Fail a reviewer whose |severity| is beyond P points.")] = None,
    length_max: Annotated[Optional[float], typer.Option(
        "--length-max", metavar="P", help="Fail when |length effect| is beyond P points per SD of log length.")] = None,
    retest_max: Annotated[Optional[float], typer.Option(
        "--retest-max", metavar="P", help="Fail a reviewer whose two scores of one answer differ by more than P "
        "points on average (repeat stability).")] = None,
    min_sessions: Annotated[Optional[int], typer.Option(
        "--min-sessions", metavar="N", help="Fail a window of fewer than N sessions.")] = None,
    min_tier: Annotated[Optional[str], typer.Option(
        "--min-tier", metavar="TIER", help="Fail a window below this confidence tier "
                                           "(insufficient, preliminary, moderate, high).")] = None,
    on: Annotated[Optional[str], typer.Option(
        "--on", metavar="ci|estimate", help="Judge the options' figure rules on the 95% CI (default) or "
                                            "the estimate.")] = None,
    fmt: Annotated[Optional[str], format_option(*FORMATS)] = None,
    as_json: Json = False,
    output: Annotated[Optional[str], output_option(*FORMATS)] = None,
    seed: Annotated[int, typer.Option(min=0, help="Seed of the session resampling behind bootstrap CIs.")] = 0,
    sample_sessions: SampleSessions = SAMPLE_SESSIONS,
) -> None:
    """Gate a CI job: exit 1 when a rule on the bias report fails.

    Builds the window's bias report once and judges each rule on it: by default on the 95% CI,
    not the estimate. Exit 0 when every rule passes (or cannot be measured: SKIP, and why), 1
    when one fails, 2 on a usage or data error (a bad rules file, an empty window)."""
    from council_db.cli.output import text_width
    from council_db.errors import UsageError
    from council_db.gate import outputs, verdicts
    from council_db.report.for_window import report_for_window

    fmt = chosen(FORMATS, fmt, json=as_json, output=output)
    rules = _rules(rules_file, {"agreement-min": agreement_min, "position-consistency-min": position_consistency_min,
                                "severity-max": severity_max, "length-max": length_max, "retest-max": retest_max,
                                "min-sessions": min_sessions, "min-tier": min_tier},
                   no_flags, alpha, flag_kind or [], flag_reviewer or [], on)
    window, filters = window_and_filters(sessions=sessions, days=days, since=since, until=until, as_of=as_of,
                                         reviewer=reviewer, model=model, config_version=config_version,
                                         category=category, dimension=dimension)
    made = report_for_window(state(ctx).database(read_only=True), window, filters, seed=seed,
                             sample_sessions=sample_sessions, for_rules=True)
    if made.report.window.sessions == 0:
        raise UsageError(made.empty_window_hint or "no session in this window: the database holds none")
    outcomes = verdicts.judge(made.report, rules)
    page = {"json": lambda out: outputs.as_json(outcomes, rules, made.report.window),
            "junit": lambda out: outputs.junit(outcomes), "github": lambda out: outputs.github(outcomes),
            "text": lambda out: outputs.text(outcomes, made.report.window, text_width(out))}[fmt]
    with destination(output, "the check") as out:
        out.write(page(out))
    wrote(output, fmt, len(outcomes), "result")
    if fmt == "github" and os.environ.get("GITHUB_STEP_SUMMARY"):
        with open(os.environ["GITHUB_STEP_SUMMARY"], "a", encoding="utf-8") as summary:
            summary.write(outputs.step_summary(outcomes, made.report.window))
    raise typer.Exit(verdicts.exit_code(outcomes))
