"""council-db diff: does the new judge grade like the old one? Two reviewers, two config
versions, or the windows before and after a change, compared with CIs."""

from __future__ import annotations

from dataclasses import replace
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
    from council_db.analysis.loading.window import Window

FORMATS = ("text", "markdown", "json")  # report.diff_outputs writes each
MODES = "give one of: --reviewer A --against B, --config-version V1 --against-config V2, or --changed-at TIME"


def _one(values: list[str] | None, option: str, partner: str) -> str:
    from council_db.errors import UsageError

    if not values or len(values) != 1:
        raise UsageError(f"{partner} compares with one {option}: give {option} exactly once "
                         f"(got {len(values or [])})")
    return values[0]


def _split(window: Window, at: str) -> tuple[Window, Window]:
    """The window's sessions before ``at`` and from ``at`` on (its own --since/--until still bound them)."""
    from council_db.cli.context import checked_time
    from council_db.contract.timestamps import timestamp_us
    from council_db.errors import UsageError

    checked_time("--changed-at", at)
    if window.sessions is not None:
        raise UsageError("--sessions cannot split at --changed-at: bound the windows by time "
                         "(--since, --until, --days)")
    moment = timestamp_us(at)
    if window.since is not None and timestamp_us(window.since) >= moment:
        raise UsageError(f"--changed-at {at} is not after --since {window.since}: nothing is before it")
    if window.until is not None and timestamp_us(window.until) <= moment:
        raise UsageError(f"--changed-at {at} is not before --until {window.until}: nothing is after it")
    return replace(window, until=at), replace(window, since=at)


def command(
    ctx: typer.Context,
    against: Annotated[Optional[str], typer.Option(
        "--against", metavar="ID", help="Compare the one --reviewer with this reviewer (a model or a full "
                                        "label) on the answers both scored.")] = None,
    against_config: Annotated[Optional[str], typer.Option(
        "--against-config", metavar="V", help="Compare the one --config-version with this one on the same "
                                              "queries' answers (query_hash and candidate).")] = None,
    changed_at: Annotated[Optional[str], typer.Option(
        "--changed-at", metavar="TIME", help="Compare the bias report of the sessions before this ISO-8601 "
                                             "time with the one from it on.")] = None,
    fail_on_change: Annotated[bool, typer.Option(
        "--fail-on-change", help="Exit 1 when a figure changed beyond its CI (q <= 0.05).")] = False,
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
    fmt: Annotated[Optional[str], format_option(*FORMATS)] = None,
    as_json: Json = False,
    output: Annotated[Optional[str], output_option(*FORMATS)] = None,
    seed: Annotated[int, typer.Option(min=0, help="Seed of the session resampling behind bootstrap CIs.")] = 0,
    sample_sessions: SampleSessions = SAMPLE_SESSIONS,
) -> None:
    """Compare two judges, config versions or time windows, with CIs.

    Does the new judge grade like the old one? Two reviewers (--reviewer A --against B) or two
    council config versions (--config-version V1 --against-config V2) on the items both
    scored: the flip rate of verdicts, the paired mean difference, Cohen's kappa and weighted
    kappa, each with a 95% CI resampling sessions (or queries), and each candidate's difference
    with BH q-values. Or --changed-at TIME: which figures of the bias report changed between
    the windows before and after it (q <= 0.05, Benjamini-Yekutieli over the figures). Exit 0,
    or 1 with --fail-on-change when something changed; 2 on a usage or data error (no shared
    items)."""
    from council_db.cli.output import text_width
    from council_db.errors import UsageError
    from council_db.report import diff_outputs

    fmt = chosen(FORMATS, fmt, json=as_json, output=output)
    modes = [given for given in (against, against_config, changed_at) if given is not None]
    if len(modes) != 1:
        raise UsageError(f"diff needs one way to name its two sides ({len(modes)} given): {MODES}")
    window, filters = window_and_filters(sessions=sessions, days=days, since=since, until=until, as_of=as_of,
                                         reviewer=reviewer, model=model, config_version=config_version,
                                         category=category, dimension=dimension)
    db = state(ctx).database(read_only=True)
    if changed_at is not None:
        from council_db.report.diffs import windows_diff

        before, after = _split(window, changed_at)
        diff = windows_diff(db, before, after, filters=filters, seed=seed, sample_sessions=sample_sessions)
    else:
        from council_db.analysis.versions import same_items, sides
        from council_db.report.diffs import ItemsDiff

        if against is not None:
            found = sides.reviewers(db, replace(window, reviewers=[]), _one(reviewer, "--reviewer", "--against"),
                                    against, sample_sessions)
        else:
            found = sides.config_versions(db, replace(window, config_versions=[]),
                                          _one(config_version, "--config-version", "--against-config"),
                                          against_config, sample_sessions)
        diff = ItemsDiff(found, same_items.compare(found.items, seed=seed), window.requested().words)
    page = {"text": lambda out: diff_outputs.text(diff, text_width(out)),
            "markdown": lambda out: diff_outputs.markdown(diff), "json": lambda out: diff_outputs.as_json(diff)}[fmt]
    with destination(output, "the diff") as out:
        out.write(page(out))
    wrote(output, fmt)
    raise typer.Exit(1 if fail_on_change and diff.changed() else 0)
