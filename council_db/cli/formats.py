"""One vocabulary for what a command prints, and where.

Record listings print ``table|json|jsonl|csv``; reports print ``text|json|markdown|html``;
a command offers the subset it can write. ``--json``, ``--nl`` and ``--csv`` are shortcuts
for ``--format json|jsonl|csv`` (as sqlite-utils has them), and without ``--format`` the
suffix of ``-o FILE`` picks the format. ``text`` and ``table`` both name the format for
people, so either word works on any command. A file ``-o`` creates is private (0600):
scores and the figures made from them are evidence, like the database itself.
"""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from typing import Annotated, Any, Iterator, Optional, TextIO

import typer

LISTING = ("table", "json", "jsonl", "csv")
REPORT = ("text", "json", "markdown", "html")
SUMMARY = ("text", "json")  # what import, ingest and db copy did: json also prints it on stdout
SUFFIXES = {".json": "json", ".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv", ".md": "markdown",
            ".markdown": "markdown", ".html": "html", ".htm": "html", ".xml": "junit"}  # any other: the default format
FOR_PEOPLE = {"text": "table", "table": "text"}  # one format, two names


def _listed(formats: tuple[str, ...]) -> str:
    return ", ".join(formats[:-1]) + f" or {formats[-1]}" if len(formats) > 1 else formats[0]


def format_option(*formats: str, help: str | None = None) -> Any:
    """``--format`` offering ``formats`` (the first is the default); checked by ``chosen``."""
    return typer.Option("--format", metavar="|".join(formats),
                        help=help or f"{_listed(formats)}; default {formats[0]}, or as -o's suffix says.")


Json = Annotated[bool, typer.Option("--json", help="Same as --format json.")]
Lines = Annotated[bool, typer.Option("--nl", help="Same as --format jsonl: one JSON object a line.")]
Csv = Annotated[bool, typer.Option("--csv", help="Same as --format csv.")]
NAMED_SUFFIX = {"json": ".json", "jsonl": ".jsonl", "csv": ".csv", "markdown": ".md", "html": ".html",
                "junit": ".xml"}  # in help


def output_option(*formats: str) -> Any:
    """``-o FILE``, its help naming the suffixes that pick one of ``formats``, and no other."""
    suffixes = tuple(suffix for name, suffix in NAMED_SUFFIX.items() if name in formats)
    return typer.Option("--output", "-o", metavar="FILE",
                        help="Write to FILE instead of stdout (a new file is private, 0600)"
                             + (f"; {_listed(suffixes)} sets the format." if suffixes else "."))


Output = Annotated[Optional[str], output_option(*LISTING)]  # a listing's -o
Wide = Annotated[bool, typer.Option("--wide", help="Tables: every column and whole session ids.")]


def chosen(formats: tuple[str, ...], fmt: str | None = None, *, json: bool = False, nl: bool = False,
           csv: bool = False, output: str | None = None) -> str:
    """The format to write: --format, else a shortcut, else -o's suffix, else the first of
    ``formats``; a format the command cannot write is a usage error listing those it can."""
    shortcuts = [name for name, given in (("json", json), ("jsonl", nl), ("csv", csv)) if given]
    if len(shortcuts) > 1 or (shortcuts and fmt is not None and fmt != shortcuts[0]):
        given = ([f"--format {fmt}"] if fmt is not None else []) + [f"--{_flag(s)}" for s in shortcuts]
        raise typer.BadParameter(f"{' and '.join(given)} disagree: give one format", param_hint="--format")
    if fmt is not None or shortcuts:
        return _offered(fmt or shortcuts[0], formats, "--format")
    suffix = os.path.splitext(output or "")[1].lower()
    if output not in (None, "-") and suffix in SUFFIXES:
        return _offered(SUFFIXES[suffix], formats, "--output", f"{output} is {SUFFIXES[suffix]} by its name")
    return formats[0]


def _offered(name: str, formats: tuple[str, ...], option: str, why: str | None = None) -> str:
    if name in formats:
        return name
    if FOR_PEOPLE.get(name) in formats:
        return FOR_PEOPLE[name]
    if why:
        raise typer.BadParameter(f"{why}, which this command does not write (it writes {_listed(formats)}); "
                                 "give --format", param_hint=option)
    raise typer.BadParameter(f"{name} is not one this command writes: it writes {_listed(formats)}",
                             param_hint=option)


def _flag(name: str) -> str:
    return "nl" if name == "jsonl" else name


def to_file(output: str | None) -> bool:
    return output not in (None, "-")


def wrote(output: str | None, fmt: str, count: int | None = None, noun: str = "row") -> None:
    """Say on stderr what went into a file: "wrote sessions.csv (csv, 300 sessions)"."""
    from council_db.cli.context import message

    if to_file(output):
        many = "" if count is None else f", {count:,} {noun}{'' if count == 1 else 's'}"
        message(f"wrote {output} ({fmt}{many})")


@contextmanager
def destination(output: str | None, what: str = "the output") -> Iterator[TextIO]:
    """stdout, or the file ``output`` (created 0600, or truncated keeping its mode). Open it
    only once there is something to write, so a command that fails leaves no file behind."""
    from council_db.errors import CouncilDbError
    from council_db.private_files import open_private

    if not to_file(output):
        yield sys.stdout
        sys.stdout.flush()
        return
    try:
        out = open_private(os.path.expanduser(output))
    except OSError as error:
        raise CouncilDbError(f"cannot write {what} to {output}: {error.strerror}") from None
    with out:
        yield out
