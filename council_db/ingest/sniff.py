"""Is a file the format it is imported as? A JSON array, a CSV, an image or a judge log of
another format read line by line gave thousands of rejected lines, all stored, and exit 3
although nothing was imported. So before anything is written, the first 64 KiB of each file
(plain, gzip, or stdin as far as it is buffered; a FIFO is not read twice) are looked at, and
a file that is plainly something else is refused with one line saying what it looks like and
how to import it. The import then keeps watch: a file whose first 100 rejected lines come
before any line gave a record stops there, storing nothing (docs/import-formats.md).
"""

from __future__ import annotations

import codecs
import csv
import io
import json
import re
import shlex
from typing import TYPE_CHECKING, Iterator

from council_db.contract.record import Record
from council_db.errors import CouncilDbError
from council_db.ingest.formats.mapping import suggested_map
from council_db.ingest.formats.options import DOCUMENTS, FORMATS, LLM_COUNCIL, MAPPED, RUN_LOGS, FormatOptions
from council_db.ingest.head import SAMPLE_BYTES, head

if TYPE_CHECKING:
    from council_db.ingest.pipeline import Chunk
    from council_db.ingest.rejected import Rejected
    from council_db.ingest.sources import Source

SAMPLE_LINES = 20  # lines of the sample that must all be binary for "not text"
ALL_BAD_LINES = 100  # rejected lines before any record that stop an import
SHOWN_COLUMNS = 20  # of a CSV's header, in the mapping a refusal suggests
BOM = b"\xef\xbb\xbf"
PARQUET = "a Parquet file"
ZIP = b"PK\x03\x04"
# What a file starts with, where a JSON line cannot ('{' or '['), and what it then is
SIGNATURES = {
    b"\x89PNG\r\n\x1a\n": "a PNG image", b"\xff\xd8\xff": "a JPEG image", b"GIF8": "a GIF image",
    b"%PDF-": "a PDF document", ZIP: "a ZIP archive (xlsx and docx files are ZIP too)",
    b"SQLite format 3\x00": "an SQLite database", b"PAR1": PARQUET, b"BZh": "bzip2-compressed",
    b"\xfd7zXZ\x00": "xz-compressed", b"\x28\xb5\x2f\xfd": "zstd-compressed",
}
UTF16 = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
# JSON lines of FastChat (and arena-hard-auto) files that are no judgments, by the keys every
# line has, and the --from of the judgments they go with (arena-hard v0.1 writes FastChat's)
FASTCHAT_FILES = (
    ({"question_id", "answer_id", "model_id", "choices"}, "FastChat model answers (model_answer/*.jsonl)",
     "fastchat-..."),
    ({"question_id", "answer_id", "model_id", "text"}, "FastChat answers (answer/answer_*.jsonl)", "fastchat-..."),
    ({"question_id", "category", "turns"}, "FastChat questions (question.jsonl)", "fastchat-..."),
    ({"uid", "model", "messages"}, "arena-hard-auto model answers (model_answer/*.jsonl)", "arena-hard"),
    ({"uid", "category", "prompt"}, "arena-hard-auto questions (question.jsonl)", "arena-hard"),
)
NAMES = {LLM_COUNCIL: "llm-council bias records", "fastchat-single": "FastChat single-answer judgments",
         "fastchat-pair": "FastChat pairwise judgments", "fastchat-review": "FastChat review table lines",
         "llmbar": "an LLMBar result.json", "judgebench": "JudgeBench judge outputs",
         "alpaca-eval": "AlpacaEval annotations (annotations.json)", "arena-hard": "arena-hard-auto judgments",
         "openai-evals": "an OpenAI evals log",
         "promptfoo": "a promptfoo results file",
         "inspect": "a UK AISI Inspect eval log"}
INSPECT_ENTRIES = (b"_journal/", b"header.json", b"start.json", b"samples/")  # a .eval's first ZIP entry
_INSPECT_JSON = re.compile(rb'\A\{\s*"version"\s*:\s*\d+\s*,\s*"status"\s*:\s*"\w+"\s*,\s*"eval"\s*:')


def check(source: Source, options: FormatOptions) -> None:
    """CouncilDbError naming what the file looks like and the fix, when it plainly is not
    ``options.format``; nothing when it may be (its lines are then judged one by one). A
    format whose file is one JSON document (LLMBar's, AlpacaEval's) is judged by its reader,
    item by item, once its start is JSON at all."""
    document = options.format in DOCUMENTS
    sample = head(source)
    named = "" if source.kind == "stdin" else f" {shlex.quote(source.name)}"  # jq reads stdin without a name
    found = None if sample is None else verdict(sample, options.format, named, document=document)
    if found is None and sample is not None and options.format == "inspect":
        found = _not_inspect(sample)
    if found is not None:  # before the reader's own checks: the file's kind is the likelier mistake
        raise CouncilDbError(f"{source.name}: {found}; nothing was imported")
    if document or options.format in MAPPED + RUN_LOGS:  # a document's layout, a mapping's columns, a log's start
        from council_db.ingest.formats.readers import reader_class

        reader_class(options.format).check_source(options, source)


def verdict(sample: bytes, format: str, named: str, *, document: bool = False) -> str | None:
    """What the start of a file says it is and how to import it, when that is not ``format``
    (``named``: the file as a command's argument, with its leading space). A ``document``
    format's file is one JSON value, a list or an object, which its reader judges."""
    if sample.startswith(UTF16):
        return f"UTF-16 text, not UTF-8: iconv -f UTF-16 -t UTF-8{named} | council-db import -{_from(format)}"
    data = sample.removeprefix(BOM).lstrip(b" \t\r\n")
    if not data:
        return None
    if _is_inspect_log(data):
        return None if format == "inspect" else f"{NAMES['inspect']}: add --from inspect"
    if format == "inspect" and data.startswith(ZIP):
        return None  # an archive its reader has judged (formats/inspect_files.check_archive)
    if data[:1] not in (b"{", b"["):
        what = next((what for magic, what in SIGNATURES.items() if data.startswith(magic)), None)
        if what == PARQUET:
            return (f"not text ({what}): convert it to CSV and import that with --from csv "
                    "(docs/import-formats.md has a duckdb and a pandas one-liner)")
        if what is not None:
            return f"not text ({what}); council-db import reads JSON Lines, one JSON object per line"
    lines = [line for line in data.split(b"\n")[:SAMPLE_LINES] if line.strip()]
    cut = len(sample) == SAMPLE_BYTES and data.count(b"\n") < SAMPLE_LINES  # the last line may go on
    if not any(_is_text(line, final=not (cut and number == len(lines) - 1)) for number, line in enumerate(lines)):
        return "not text (bytes that are not UTF-8, or NUL bytes); council-db import reads JSON Lines"
    first = lines[0].strip()
    partial = len(sample) >= SAMPLE_BYTES  # the sample may end inside a line
    if format != "promptfoo" and first.startswith(b"{") and _promptfoo(data, partial):
        return f"{NAMES['promptfoo']}: add --from promptfoo"
    if format == "csv":
        return _not_csv(first)
    if first.startswith(b"["):
        listed = _listed(data, format)
        if listed or document:
            return listed or _opening(data, format, partial)
        return f"a JSON array, not JSON Lines: jq -c '.[]'{named} | council-db import -{_from(format)}"
    if first == b"{":
        if document:
            return _opening(data, format, partial)
        return f"pretty-printed JSON, not JSON Lines: jq -c .{named} | council-db import -{_from(format)}"
    if first.startswith(b"{"):
        return _other_format(first, format) or _opening(data, format, partial)
    return _table(lines, format)


def _is_inspect_log(data: bytes) -> bool:
    """An Inspect log: a ``.json`` by its first keys, a ``.eval`` (ZIP) by its first entry's name."""
    if data.startswith(ZIP) and len(data) >= 30:
        name_length = int.from_bytes(data[26:28], "little")
        return data[30:30 + name_length].startswith(INSPECT_ENTRIES)
    return _INSPECT_JSON.match(data) is not None


def _not_inspect(sample: bytes) -> str | None:
    """A file given as an Inspect log that starts as none does (a .eval's archive is judged by its reader)."""
    data = sample.removeprefix(BOM).lstrip(b" \t\r\n")
    if not data or data.startswith(ZIP) or _is_inspect_log(data):
        return None
    return ('not an Inspect eval log: a .json log starts {"version": ..., "status": ..., "eval": ...} and a .eval '
            "is a ZIP archive, as Inspect writes them")


def _not_csv(first: bytes) -> str | None:
    """A file given as CSV whose first line is JSON."""
    if first.startswith((b"{", b"[")):
        return "JSON, not CSV: --from jsonl reads JSON Lines through the same --map"
    return None


def _from(format: str) -> str:
    return "" if format == LLM_COUNCIL else f" --from {format}"


def _is_text(line: bytes, final: bool) -> bool:
    """UTF-8 without NUL bytes (``final`` False: the line may be cut inside a character)."""
    if b"\x00" in line:
        return False
    try:
        codecs.utf_8_decode(line, "strict", final)
    except UnicodeDecodeError:
        return False
    return True


def _listed(data: bytes, format: str) -> str | None:
    """A JSON list whose first element has every field of a document format (AlpacaEval's
    annotations, LLMBar's items): which, and its --from."""
    from council_db.ingest.formats.json_list import ListElements

    elements = ListElements("a JSON list")
    for number, line in enumerate(data.split(b"\n"), start=1):  # a line the sample cuts closes no element
        for _, found in elements.feed(number, line):
            try:
                keys = set(json.loads(found)) if isinstance(found, bytes) else set()
            except (ValueError, TypeError, RecursionError):
                return None
            other = next((name for name in DOCUMENTS if set(required_fields(name)) <= keys), None)
            return None if other in (None, format) else f"{NAMES[other]}: add --from {other}"
    return None


def _promptfoo(data: bytes, cut: bool) -> bool:
    """Whether the file starts as promptfoo's results.json."""
    from council_db.ingest.formats.promptfoo_document import looks_like_results

    return looks_like_results(data, cut)


def _opening(data: bytes, format: str, cut: bool) -> str | None:
    """For --from promptfoo: what the start of the file shows is not its results.json of
    version 3 (another version, another shape), by line."""
    if format != "promptfoo":
        return None
    from council_db.ingest.formats.promptfoo_document import opening_problem

    found = opening_problem(data, cut)
    return None if found is None else f"line {found[0]}: {found[1]}"


def _other_format(first: bytes, format: str) -> str | None:
    """The first line is a JSON object: of another format that import reads, or of a
    FastChat file that is no judgment."""
    try:
        keys = set(json.loads(first))
    except (ValueError, TypeError, RecursionError):  # cut, broken or no object: judged line by line
        return None
    if set(required_fields(format)) <= keys:
        return None
    for other in FORMATS:
        if other not in DOCUMENTS and other not in MAPPED and set(required_fields(other)) <= keys:
            fix = "leave out --from" if other == LLM_COUNCIL else f"add --from {other}"
            return f"{NAMES[other]}: {fix}"
    for needed, what, judgments in FASTCHAT_FILES:
        if needed <= keys:
            return f"{what}: give their folder as --answers DIR when importing the judgments (--from {judgments})"
    return None


def _table(lines: list[bytes], format: str) -> str | None:
    """CSV or tab-separated text: a header and a row with as many fields (quotes read as CSV
    reads them), told with a mapping for --from csv made from the header."""
    text = b"\n".join(lines).decode("utf-8", "replace")
    for separator, name in ((",", "CSV"), ("\t", "tab-separated text")):
        # newline="": the csv module's own line ends, so a lone carriage return is no error
        rows = [row for row in csv.reader(io.StringIO(text, newline=""), delimiter=separator) if row][:2]
        if len(rows) == 2 and 1 < len(rows[0]) == len(rows[1]):
            columns = [column.strip() for column in rows[0]]
            return (f"{name} with the columns {', '.join(columns[:SHOWN_COLUMNS])}: import it with --from csv --map "
                    f"{suggested_map(columns)} (each role=column; docs/import-formats.md)")
    return None


def required_fields(format: str) -> tuple[str, ...]:
    """The fields every line of the format has."""
    from council_db.ingest.formats.judge_lines import required
    from council_db.ingest.formats.readers import reader_class

    return required(Record) if format == LLM_COUNCIL else reader_class(format).required_fields()


def stopped_when_all_bad(chunks: Iterator[Chunk], source: Source) -> Iterator[Chunk]:
    """The chunks of an import, stopped with a CouncilDbError when ALL_BAD_LINES lines have
    been rejected before any line gave a record: the file is not what it is read as, and its
    rejected lines would be all it stores. The error names the first one's problem."""
    rejected: list[Rejected] = []
    watching = True
    for chunk in chunks:
        normalised = chunk.normalised
        if watching and (len(normalised.rows) or normalised.skipped or normalised.no_verdict):
            watching = False
        elif watching:
            rejected += normalised.rejected
            if len(rejected) >= ALL_BAD_LINES:
                getattr(chunks, "close", lambda: None)()  # worker processes end now
                first = rejected[0]
                raise CouncilDbError(
                    f"{source.name}: {len(rejected):,} lines were rejected before any line gave a record (line "
                    f"{first.line_number}: {first.reason}); is it another format? (council-db import --help lists "
                    "them) nothing was imported")
        yield chunk
