"""council-db reviewers: the stored reviewers with their kind (LLM judge, human rater, gold
label), and marking them later. More than one reviewer is a dry run unless --yes says otherwise."""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Optional

import typer

from council_db.cli.context import message, state
from council_db.cli.formats import LISTING, Csv, Json, Lines, Output, chosen, destination, format_option
from council_db.cli.output import emit_rows

# contract.fields.REVIEWER_KINDS, written out so that --help imports no contract module
# (tests/cli/test_reviewers.py checks that they agree)
KINDS = ("judge", "human", "gold")
ReviewerKind = Enum("ReviewerKind", {name: name for name in KINDS}, type=str)  # type: ignore[misc]


def command(
    ctx: typer.Context,
    patterns: Annotated[Optional[list[str]], typer.Argument(
        metavar="PATTERN", help="Reviewer names or glob patterns (expert_*, *gpt-4*); quote them for the "
        "shell. Without --kind they only choose which reviewers to list.", show_default=False)] = None,
    kind: Annotated[Optional[ReviewerKind], typer.Option(
        "--kind", help="Mark the reviewers the patterns match: judge (an LLM), human (a person) or gold (the known "
        "right answer).")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="With --kind: say what would change, change "
                                                            "nothing.")] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="With --kind: mark them; without it, more than one "
                                                          "reviewer is only listed.")] = False,
    fmt: Annotated[Optional[str], format_option(*LISTING)] = None, as_json: Json = False, nl: Lines = False,
    as_csv: Csv = False, output: Output = None,
) -> None:
    """The stored reviewers and their kind: judge, human or gold.

    A judge is an LLM, human a person rating the same sessions, gold the known right answer.
    Each with its usable scores, their sessions and its excluded scores. With --kind, the
    reviewers the patterns match are marked that kind (the agreement figures compare each
    judge with the human and gold reviewers)."""
    from council_db.store import reviewer_kinds

    if kind is None:
        if dry_run or yes:
            raise typer.BadParameter("--dry-run and --yes go with --kind KIND", param_hint="--kind")
        fmt = chosen(LISTING, fmt, json=as_json, nl=nl, csv=as_csv, output=output)
        rows = reviewer_kinds.reviewers(state(ctx).database(read_only=True), patterns)
        with destination(output) as out:
            emit_rows(rows, fmt, title="reviewers", out=out)
        return
    if not patterns:
        raise typer.BadParameter("name the reviewers to mark: council-db reviewers --kind human 'expert_*'",
                                 param_hint="PATTERN")
    db = state(ctx).database(read_only=True)  # marking in a mistyped --db must not create one (its writer is normal)
    plan = reviewer_kinds.remarking(db, kind.value, patterns)
    if not plan.matched:
        message(f"error: no stored reviewer matches {' '.join(patterns)} (council-db reviewers lists them)")
        raise typer.Exit(1)
    if not plan.changes:
        message(f"nothing to change: {_reviewers(len(plan.matched))} {_are(len(plan.matched))} {kind.value} already")
        return
    changes = ", ".join(f"{name} (was {was})" for name, was in plan.changes.items())
    confirm = len(plan.changes) > 1 and not yes
    if dry_run or confirm:
        again = " and ".join((["without --dry-run"] if dry_run else []) + (["with --yes"] if confirm else []))
        message(f"would mark {_reviewers(len(plan.changes))} {kind.value}: {changes}. Nothing was changed; run "
                f"again {again} to mark {'them' if len(plan.changes) > 1 else 'it'}.")
        return
    reviewer_kinds.remark(db, plan)
    message(f"marked {_reviewers(len(plan.changes))} {kind.value}: {changes}")


def _reviewers(n: int) -> str:
    return f"{n:,} reviewer" if n == 1 else f"{n:,} reviewers"


def _are(n: int) -> str:
    return "is" if n == 1 else "are"
