"""council-db import: llm-council bias_metrics.jsonl files, or FastChat's judge logs (--from), into the database."""

from __future__ import annotations

import json
import shlex
import sys
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from council_db.cli.context import message, state
from council_db.cli.formats import SUMMARY, Json, chosen, format_option
from council_db.cli.reviewers import ReviewerKind

if TYPE_CHECKING:
    from council_db.ingest.importer import FileResult, ImportSummary

EXIT_REJECTED = 3
# ingest.formats.options.FORMATS, written out with what each reads so that --help imports no
# ingest module (tests/ingest/test_import_formats.py checks that they agree)
FORMATS = {
    "llm-council": "its bias_metrics.jsonl",
    "fastchat-single": "FastChat llm_judge single-answer grading (model_judgment/*_single.jsonl)",
    "fastchat-pair": "FastChat llm_judge pairwise judgments in both orders (*_pair.jsonl)",
    "fastchat-review": "FastChat Vicuna-80 review tables (review/<run>/*.jsonl)",
    "llmbar": "LLMBar evaluator runs with gold labels (evaluators/<judge>/<strategy>/result.json)",
    "judgebench": "JudgeBench judge outputs with gold labels, both orders (outputs/*.jsonl)",
    "alpaca-eval": "AlpacaEval annotations against a baseline (results/<model>/<annotator>/annotations.json)",
    "arena-hard": "arena-hard-auto judgments against a baseline, both orders (model_judgment/<judge>/*.jsonl)",
    "csv": "any table of scores with a header row, through --map",
    "jsonl": "JSON Lines of any shape, through --map (nested fields by dotted path)",
    "openai-evals": "OpenAI evals run logs of model-graded evals (oaieval --record_path LOG.jsonl)",
    "promptfoo": "promptfoo eval results, each model-graded assertion (results.json, output version 3)",
    "inspect": "UK AISI Inspect eval logs (.json or .eval), each sample's model-graded scores",
}
SHOWN_PER_FILE = 20


def _progress():
    """A byte progress bar on a terminal; nothing otherwise (rich is imported only here)."""
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn, TransferSpeedColumn

    from council_db.ingest.importer import Progress as Callbacks
    from council_db.terminal_text import terminal_text

    class Bar(Callbacks):
        def __init__(self) -> None:
            # markup=False: the description is a file name, data that must show as it is
            self.bar = Progress(TextColumn("{task.description}", markup=False), BarColumn(), DownloadColumn(),
                                TransferSpeedColumn(), TimeRemainingColumn(), transient=True)
            self.task = None

        def start(self, source, total_bytes, done_bytes):
            self.bar.start()
            self.task = self.bar.add_task(terminal_text(Path(source.name).name), total=total_bytes,
                                          completed=done_bytes)

        def advance(self, done_bytes):
            if done_bytes:
                self.bar.update(self.task, completed=done_bytes)

        def finish(self):
            self.bar.stop()

    return Bar()


def _describe(result: FileResult) -> str:
    from council_db.counted_text import counted

    parts = [counted(result.lines, "line") + (" (new since last import)" if result.mode == "incremental" else ""),
             counted(result.inserted, "new record"), f"{result.duplicates:,} already stored",
             f"{result.rejected:,} rejected", f"{result.skipped:,} skipped (consent level 0)"]
    if result.excluded:
        parts.append(f"{result.excluded:,} kept but excluded from analyses (never scored, or off its scale)")
    if result.no_verdict:
        parts.append(f"{counted(result.no_verdict, 'judgment')} without a verdict (no record)")
    if result.unknown_length:
        parts.append(f"{counted(result.unknown_length, 'record')} whose answer length is unknown (left out of "
                     "length analyses)")
    if result.no_position:
        parts.append(f"{counted(result.no_position, 'record')} without position (taken as 0, as llm-council does; "
                     "left out of position analyses)")
    number = "" if result.import_id is None else f" (import {result.import_id})"
    return f"{result.source}{number}: " + ", ".join(parts)


def _report(summary: ImportSummary, reviewer_kind: str | None) -> None:
    for result in summary.files:
        if result.note:
            message(f"{result.source}: {result.note}")
        for warning in result.warnings:
            message(f"warning: {result.source}: {warning}")
        message(_describe(result))
        if reviewer_kind and not result.lines:
            message(f"{result.source}: nothing new was read, so no reviewer was marked {reviewer_kind}: council-db "
                    f"reviewers --kind {reviewer_kind} PATTERN marks stored reviewers")
        if result.held_bytes and result.format == "csv":  # a row cannot tell it is complete: only its newline can
            message(f"{result.source}: the last row ({result.held_bytes:,} bytes) has no newline, or a quoted field "
                    "left open: held for the next import, as it may still be being written (end the file with a "
                    "newline to import it)")
        elif result.held_bytes:  # most likely a record still being written: it is read once complete
            message(f"{result.source}: the last line ({result.held_bytes:,} bytes) has no newline and does not "
                    "parse yet: held for the next import")
        for change in result.remarked:
            undo = f"council-db reviewers --kind {change['was']} {shlex.quote(change['reviewer'])}"
            message(f"warning: reviewer {change['reviewer']} was stored as {change['was']} and is now {change['now']}, "
                    f"as this import says ({undo} marks it back)")
        for bad in result.rejected_lines[:SHOWN_PER_FILE]:
            message(f"  line {bad.line_number}: {bad.reason}")
        if result.rejected:
            more = result.rejected - min(result.rejected, SHOWN_PER_FILE)
            message(("  ... and {:,} more; ".format(more) if more else "  ")
                    + f"every rejected line is kept: council-db rejected --import {result.import_id}"
                    + _kept_earlier(result.rejected_earlier))


def mapped_options(mapping: list[str], map_file: Path | None, scale: str | None,
                   delimiter: str | None) -> dict:
    """--map, --map-file, --scale and --delimiter as FormatOptions' fields (the options win over
    the file's lines)."""
    from council_db.ingest.formats.mapping import checked_pairs, mapping_file, parsed_map
    from council_db.ingest.formats.options import delimiter_named

    roles, given = mapping_file(map_file) if map_file is not None else ({}, {})
    roles.update(parsed_map(mapping))
    delimiter = delimiter or given.get("delimiter")
    return {"mapping": checked_pairs(roles), "scale": scale or given.get("scale"),
            "delimiter": None if delimiter is None else delimiter_named(delimiter)}


def _kept_earlier(imports: list[int]) -> str:
    """Where the bad lines are that an earlier import of the file kept first (kept once)."""
    if not imports:
        return ""
    return " (and " + ", ".join(f"--import {number}" for number in imports) + ": bad lines kept first by an earlier " \
        "import of this file)"


InputFormat = Enum("InputFormat", {name: name for name in FORMATS}, type=str)  # type: ignore[misc]


def command(
    ctx: typer.Context,
    files: Annotated[list[str], typer.Argument(metavar="FILE", help="Files to read (.gz too); - reads stdin.")],
    read_as: Annotated[InputFormat, typer.Option(
        "--from", help="The files' format: " + "; ".join(f"{name}: {what}" for name, what in FORMATS.items())
        + ". docs/import-formats.md says what each becomes.")] = InputFormat("llm-council"),
    answers: Annotated[Optional[Path], typer.Option(
        "--answers", metavar="DIR", help="FastChat's answer files (model_answer/ or answer/): the lengths of the "
        "answers the judge saw (else unknown, and left out of length analyses); fastchat-review needs them; "
        "arena-hard: its model_answer/, for lengths and the answers' style (tokens, markdown).")] = None,
    bench: Annotated[Optional[str], typer.Option(
        "--bench", metavar="NAME", help="fastchat-single/pair: the bench the question ids are of, put before each "
        "session key (when one database holds benches whose ids overlap); llmbar: the dataset (default: the folder "
        "above evaluators/); judgebench: the benchmark (default: judgebench); alpaca-eval: the benchmark (default: "
        "alpaca_eval); arena-hard: the benchmark (default: the folder above model_judgment/, else "
        "arena-hard); promptfoo: the session keys' prefix (default: promptfoo).")] = None,
    judge: Annotated[Optional[str], typer.Option(
        "--judge", metavar="NAME", help="fastchat-review: the judge model (default: the file name's prefix "
        "before _review_, else gpt-4, as FastChat's eval_gpt_review.py); llmbar: the judge, before /<strategy> "
        "(default: its evaluators/ folder); judgebench: the whole judge name (default: <judge_model>/<judge_name> "
        "from each line); alpaca-eval: the judge (default: each entry's annotator); arena-hard: the judge (default: "
        "each line's, else the folder under model_judgment/); promptfoo: the grader of assertions the file names "
        "none for (default: openai:gpt-5, promptfoo's documented default).")] = None,
    baseline: Annotated[Optional[str], typer.Option(
        "--baseline", metavar="MODEL", help="arena-hard: the model every judged one is compared with, for lines "
        "that name none (v0.1; default: gpt-4-0314, arena-hard-v0.1's).")] = None,
    reviewer_kind: Annotated[Optional[ReviewerKind], typer.Option(
        "--reviewer-kind", help="Mark every reviewer of these files: judge (an LLM), human (a person rating the same "
        "sessions) or gold (the known right answer). A line's own reviewer_kind wins; without either, a new "
        "reviewer is a judge and a stored one keeps its kind.")] = None,
    mapping: Annotated[Optional[list[str]], typer.Option(
        "--map", metavar="ROLE=COLUMN,...", help="csv, jsonl: which column (or dotted path) holds each role: "
        "session, candidate, reviewer and score are needed; position, length, answer_text, time, reviewer_kind and "
        "category may be added.")] = None,
    map_file: Annotated[Optional[Path], typer.Option(
        "--map-file", metavar="FILE", help="csv, jsonl: the mapping as TOML (role = \"column\" lines; scale and "
        "delimiter too); --map, --scale and --delimiter win.")] = None,
    scale: Annotated[Optional[str], typer.Option(
        "--scale", metavar="LOW-HIGH", help="csv, jsonl: the scores' scale, e.g. 1-10 (default: inferred from the "
        "first scores, with a warning); openai-evals: the range of the modelgraded spec's choice scores (default: "
        "0-1); inspect: the scale of numeric scores (inferred like csv's).")] = None,
    delimiter: Annotated[Optional[str], typer.Option(
        "--delimiter", metavar="CHAR", help="csv: the separator, one character or comma, tab, semicolon, pipe "
        "(default: a comma, or a tab when the header has tabs and no comma).")] = None,
    strict: Annotated[bool, typer.Option("--strict", help="Import nothing from a file that has a bad line.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar and no summary on stderr.")] = False,
    fmt: Annotated[Optional[str], format_option(*SUMMARY, help="json also prints the summary on stdout.")] = None,
    as_json: Json = False,
) -> None:
    """Import records: llm-council's, or other judge logs (--from).

    Re-importing is safe: stored records are never doubled, and a file that only grew is
    read from where the last import stopped.

    Exit status: 0 all lines imported or already stored, 3 some lines rejected (the good
    ones are imported), 1 fatal error, 2 usage error."""
    from council_db.errors import CouncilDbError
    from council_db.ingest.formats.answers import check_directory
    from council_db.ingest.formats.options import FormatOptions
    from council_db.ingest.importer import checked_sources, head_start, import_sources

    try:
        options = FormatOptions(read_as.value, answers, bench, judge, reviewer_kind and reviewer_kind.value,
                                baseline=baseline, **mapped_options(mapping or [], map_file, scale, delimiter))
        options.check()
    except CouncilDbError as error:
        raise typer.BadParameter(str(error), param_hint="--from") from None
    fmt = chosen(SUMMARY, fmt, json=as_json)
    if answers is not None:  # the files and --answers are checked before the database is opened, or created
        check_directory(answers)
    sources = checked_sources(files, options)
    if read_as.value == "arena-hard" and baseline is None and not quiet:
        message("arena-hard: a line that names no baseline (v0.1) is judged against gpt-4-0314, the format's "
                "default; --baseline MODEL names another")
    started = head_start(sources, options)  # reading while the database opens: the importer closes it
    try:
        db = state(ctx).database(importing=True)
        progress = _progress() if sys.stderr.isatty() and not quiet else None
        summary = import_sources(db, sources, strict=strict, progress=progress, options=options, head_start=started)
    finally:
        if started is not None:
            started.close()
    if not quiet:
        _report(summary, options.reviewer_kind)
    if fmt == "json":
        print(json.dumps(summary.as_json(), indent=2))
    if summary.total("rejected"):
        raise typer.Exit(EXIT_REJECTED)
