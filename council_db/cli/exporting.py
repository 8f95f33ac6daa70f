"""council-db export: records out as llm-council JSONL, a JSON array or CSV, streamed."""

from __future__ import annotations

from dataclasses import replace
from typing import Annotated, Optional

import typer

from council_db.cli.context import bad_time, checked_time, message, state
from council_db.cli.formats import Csv, Json, Lines, chosen, destination, format_option, output_option, to_file

EXPORT = ("jsonl", "json", "csv")  # records for programs; to look at them, council-db sessions or sql


def command(
    ctx: typer.Context,
    output: Annotated[Optional[str], output_option(*EXPORT)] = None,
    fmt: Annotated[Optional[str], format_option(
        *EXPORT, help="jsonl (what llm-council reads), json or csv; default jsonl, or as -o's suffix says.")] = None,
    as_json: Json = False, nl: Lines = False, as_csv: Csv = False,
    since: Annotated[Optional[str], typer.Option(metavar="TIME",
                                                 help="Only sessions at or after this ISO-8601 time.")] = None,
    until: Annotated[Optional[str], typer.Option(metavar="TIME",
                                                 help="Only sessions before this ISO-8601 time.")] = None,
    reviewer: Annotated[Optional[str], typer.Option(metavar="ID", help=(
        "Only scores given by this reviewer id: a model (with each of its prompts and settings) or one full "
        "label."))] = None,
    model: Annotated[Optional[str], typer.Option(metavar="ID", help="Only scores of this candidate model id.")] = None,
    session: Annotated[Optional[str], typer.Option(metavar="ID", help="Only this session (its id, or a prefix no "
                                                                      "other id has).")] = None,
    min_consent: Annotated[int, typer.Option(
        min=0, max=4, help="Only records with at least this consent level (2+ may leave the machine).")] = 0,
    audit: Annotated[Optional[str], typer.Option(
        "--audit", metavar="FILE.zip", help="Write an audit bundle of the window's bias report instead of records "
        "(docs/audit.md); takes --since, --until, --reviewer, --model and --as-of.")] = None,
    as_of: Annotated[Optional[str], typer.Option(
        "--as-of", metavar="TIME", help="--audit: the time the bundle's report is pinned to (default now).")] = None,
    verify_audit: Annotated[Optional[str], typer.Option(
        "--verify-audit", metavar="BUNDLE", help="Rebuild a bundle's fingerprint and report from the database: "
                                                 "exit 0 when both still match, 1 when not.")] = None,
) -> None:
    """Export stored records as llm-council JSONL, JSON or CSV.

    import -> export -> import gives the same rows, field for field. With --audit, a zip of the
    window's bias report, its data's fingerprint and how to reproduce it; --verify-audit checks one."""
    if audit is not None or verify_audit is not None or as_of is not None:
        from council_db.cli.audit import audit_command

        audit_command(ctx, audit, verify_audit, dict(as_of=as_of, since=since, until=until, reviewer=reviewer,
                                                     model=model), dict(
            session=session, min_consent=min_consent or None, output=output, format=fmt or as_json or nl or as_csv))
        return
    from council_db.contract.fields import LineError
    from council_db.outlets.export import ExportFilter, write
    from council_db.store.session_ids import full_id

    fmt = chosen(EXPORT, fmt, json=as_json, nl=nl, csv=as_csv, output=output)
    checked_time("--since", since)
    checked_time("--until", until)
    filters = ExportFilter(since, until, reviewer, model, session, min_consent)
    try:
        filters.where()
    except LineError as error:
        raise bad_time(error.problem) from None
    db = state(ctx).database(read_only=True)
    if session is not None:
        filters = replace(filters, session=full_id(db, session))
    with destination(output) as out:  # a new file is private (0600), like the database: records are evidence
        count = write(db, filters, out, fmt)
    message(f"exported {count:,} records" + (f" to {output}" if to_file(output) else ""))
