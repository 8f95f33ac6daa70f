"""The rule options `council-db check` and `council-db watch` share: one definition, so their
names, help and checks never drift apart, and the rules they give (gate/rules)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

if TYPE_CHECKING:
    from council_db.gate.rules import Rule

RulesFile = Annotated[Optional[str], typer.Option(
    "--rules", metavar="FILE", help="The rules' TOML file (its [check] table); default ./council-db.toml "
                                    "when there is one.")]
NoFlags = Annotated[bool, typer.Option("--no-flags", help="Fail on any report flag at q <= --alpha.")]
Alpha = Annotated[Optional[float], typer.Option(
    "--alpha", metavar="Q", help="--no-flags: only flags at q <= Q (at most 0.05, the default).")]
FlagKinds = Annotated[Optional[list[str]], typer.Option(
    "--flag-kind", metavar="KIND", help="--no-flags: only flags of this kind (repeatable).")]
FlagReviewers = Annotated[Optional[list[str]], typer.Option(
    "--flag-reviewer", metavar="ID", help="--no-flags: only flags naming this reviewer: a model (each of "
    "its identities) or one identity's label (repeatable).")]
AgreementMin = Annotated[Optional[float], typer.Option(
    "--agreement-min", metavar="X", help="Fail a judge whose agreement with the reference is below X.")]
PositionConsistencyMin = Annotated[Optional[float], typer.Option(
    "--position-consistency-min", metavar="X",
    help="Fail a reviewer whose position consistency (swapped pairs) is below X.")]
SeverityMax = Annotated[Optional[float], typer.Option(
    "--severity-max", metavar="P", help="Fail a reviewer whose |severity| is beyond P points.")]
LengthMax = Annotated[Optional[float], typer.Option(
    "--length-max", metavar="P", help="Fail when |length effect| is beyond P points per SD of log length.")]
RetestMax = Annotated[Optional[float], typer.Option(
    "--retest-max", metavar="P", help="Fail a reviewer whose two scores of one answer differ by more than P "
    "points on average (repeat stability).")]
StabilityMin = Annotated[Optional[float], typer.Option(
    "--stability-min", metavar="X", help="Fail a judge whose share of answers given the same verdict on every "
    "repeat (repeat stability) is below X.")]
MinSessions = Annotated[Optional[int], typer.Option(
    "--min-sessions", metavar="N", help="Fail a window of fewer than N sessions.")]
MinTier = Annotated[Optional[str], typer.Option(
    "--min-tier", metavar="TIER", help="Fail a window below this confidence tier "
                                       "(insufficient, preliminary, moderate, high).")]
On = Annotated[Optional[str], typer.Option(
    "--on", metavar="ci|estimate", help="Judge the options' figure rules on the 95% CI (default) or "
                                        "the estimate.")]


def rules_from_options(rules_file: str | None, options: dict[str, object], no_flags: bool, alpha: float | None,
                       kinds: list[str], flag_reviewers: list[str], on: str | None) -> list[Rule]:
    """The rules: --rules FILE (else ./council-db.toml when there is one), with the options' rules
    (``options``: rule name -> value, None when not given) in place of the file's of the same name."""
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
