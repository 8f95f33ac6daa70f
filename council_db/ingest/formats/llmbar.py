"""LLMBar's evaluator runs: ``<dataset>/evaluators/<judge>/<strategy>/result.json``.

What LLMBar writes (princeton-nlp/LLMBar, LLMEvaluator/evaluate.py): one JSON document, the
dataset's items in order, each with ``input``, ``output_1``, ``output_2``, ``label`` (1 or 2:
the output that follows the instruction, set by the authors) and ``results``, the stages the
strategy ran. The last stage holds the verdicts: ``"swap = False"`` (output_1 shown first) and
``"swap = True"`` (output_2 shown first), each with a ``winner`` already mapped back to the
item's labels ("1" or "2"; null when the judge's text gave none). The authors'
``statistics.json`` reads the last stage too. Earlier stages (a Swap run's first pass before
it synthesises, a strategy's auxiliary outputs) are not stored.

What an item becomes: one session (``<dataset>/<n>-<digest>``: its place in the file and 8 hex
characters of a hash of its instruction and outputs, so every judge's file of a dataset meets
its items in the same sessions, and an item that differs is another session) with two
anonymous candidates, ``<session>/output_1`` and ``<session>/output_2``, their lengths the
outputs' characters, on the "0-1" scale (1 the winner, 0 the other):
- the judge, ``<judge>/<strategy>`` from the path (``--judge NAME`` names the judge: two
  strategies of one model are two judges), gives each order it has a verdict in: swap =
  False shows output_1 in display slot 0, swap = True shows output_2 there. Both orders in one
  session are the swap design (as fastchat-pair's games): the analyses read "same item, other
  order" off the slots. A null winner is no verdict: no record, counted in the summary;
- reviewer ``gold`` (kind gold) gives the label: 1 for that output, 0 for the other, in no
  display slot. Every judge's file carries it; it is stored once.
The dataset is the folder above ``evaluators`` (``--bench NAME`` names it). The items are
undated. The file is read whole: its items span lines, and each is given the number of the
line it starts on, so a bad item is rejected by that line and its neighbours are kept.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from bisect import bisect_left
from pathlib import PurePath
from typing import Any, Iterator, Literal, Union

import msgspec

from council_db.contract.fields import LineError
from council_db.errors import CouncilDbError
from council_db.ingest.formats.judge_lines import LineReader, Values
from council_db.ingest.formats.options import FormatOptions
from council_db.ingest.lines import LineBatch, Parsed
from council_db.ingest.rejected import from_line_error
from council_db.ingest.sources import Source

SCALE = "0-1"
SLOTS = "1.2.0"  # the schema whose position is the display slot
GOLD = "gold"
SHOWN = (("output_1", "output_2"), ("output_2", "output_1"))  # in display order: swap = False, swap = True
LABELS = {"1": "output_1", "2": "output_2"}


class Item(msgspec.Struct):
    input: str
    output_1: str
    output_2: str
    label: Union[Literal[1, 2], Literal["1", "2"]]
    results: list[Any]


class Verdict(msgspec.Struct):
    winner: Union[Literal["1", "2"], None]


class Stage(msgspec.Struct):
    shown_first: Verdict = msgspec.field(name="swap = False")
    shown_second: Union[Verdict, None] = msgspec.field(name="swap = True", default=None)


def identity(options: FormatOptions, source: Source) -> tuple[str, str]:
    """(judge, dataset): from ``<dataset>/evaluators/<judge>/<strategy>/<file>``, each
    replaced by --judge and --bench; outside that layout both must be given."""
    parts = PurePath(source.name).parts
    if len(parts) >= 5 and parts[-4] == "evaluators":
        judge = f"{options.judge or parts[-3]}/{parts[-2]}"
        return judge, options.bench or parts[-5]
    if options.judge and options.bench:
        return options.judge, options.bench
    raise CouncilDbError(f"{source.name}: not in LLMBar's layout <dataset>/evaluators/<judge>/<strategy>/result.json; "
                         "give --judge NAME (with its strategy, e.g. GPT-4/Swap) and --bench NAME (the dataset)")


def document_text(source: Source) -> bytes:
    """The whole file (a JSON document is read at once), without a byte order mark."""
    if source.path is None or source.kind == "stream":
        raise CouncilDbError(f"{source.name}: LLMBar's result.json is one JSON document: give its path, not a stream")
    opener = gzip.open if source.kind == "gzip" else open
    with opener(source.path, "rb") as handle:
        return handle.read().removeprefix(b"\xef\xbb\xbf")


class Reader(LineReader):
    FORMAT = "LLMBar's result.json"
    line_type = Item
    MADE_FROM = {"session_id": "<dataset>/<item number>-<hash of the item's texts>",
                 "reviewer_id": "the judge (--judge or the folder)", "model_id": "<session>/output_1 or output_2"}
    EXPECTED = {
        "input": "the instruction, a string",
        "output_1": "the first output, a string",
        "output_2": "the second output, a string",
        "label": "1 or 2, the output that follows the instruction",
        "results": "the strategy's stages, a list whose last holds the verdicts",
    }

    @classmethod
    def check_source(cls, options: FormatOptions, source: Source) -> None:
        """The file must sit in LLMBar's layout, or --judge and --bench name what it would give."""
        identity(options, source)

    def __init__(self, options: FormatOptions, source: Source):
        super().__init__()
        self.judge, self.dataset = identity(options, source)
        self.items = list(_items(document_text(source)))  # (first line, item text or a LineError)
        self.starts = [line for line, _ in self.items]

    def __call__(self, batch: LineBatch) -> Parsed:
        """The records of the items that start on the batch's lines."""
        parsed = Parsed()
        first = bisect_left(self.starts, batch.first_line)
        last = bisect_left(self.starts, batch.first_line + len(batch.lines))
        for number, (line, found) in enumerate(self.items[first:last], start=first + 1):
            if isinstance(found, LineError):
                parsed.rejected.append(from_line_error(line, b"", found))
                continue
            try:
                made, silent = self.item_records(number, self._decoder.decode(found))
                records = [self._checked(values) for values in made]
            except (msgspec.ValidationError, msgspec.DecodeError, LineError) as error:
                parsed.rejected.append(from_line_error(line, found, self._explain(error)))
                continue
            parsed.records.extend((line, record) for record in records)
            parsed.no_verdict += silent
        return parsed

    def item_records(self, number: int, item: Item) -> tuple[list[Values], int]:
        """The gold label's records and the judge's, order by order; how many orders gave no verdict."""
        stage = _last_stage(item.results)
        session = f"{self.dataset}/{number}-{_digest(item)}"
        candidates = {name: f"{session}/{name}" for name in LABELS.values()}
        lengths = {"output_1": len(item.output_1), "output_2": len(item.output_2)}
        shared = dict(schema_version=SLOTS, session_id=session, timestamp="", score_scale=SCALE)
        gold = LABELS[str(item.label)]
        records = [dict(**shared, reviewer_id=GOLD, reviewer_kind=GOLD, model_id=candidates[name], position=None,
                          response_length_chars=lengths[name], score_value=float(name == gold))
                   for name in LABELS.values()]
        silent = 0
        for verdict, shown in zip((stage.shown_first, stage.shown_second), SHOWN):
            if verdict is None:
                continue
            if verdict.winner is None:
                silent += 1
                continue
            records += [dict(**shared, reviewer_id=self.judge, model_id=candidates[name], position=slot,
                               response_length_chars=lengths[name], score_value=float(name == LABELS[verdict.winner]))
                        for slot, name in enumerate(shown)]
        return records, silent


def _last_stage(results: list[Any]) -> Stage:
    """The verdicts: the strategy's last stage, as LLMBar's statistics read them."""
    if not results:
        raise LineError("results", "is empty; expected the strategy's stages, the last holding the verdicts")
    try:
        return msgspec.convert(results[-1], Stage)
    except msgspec.ValidationError as error:
        # the path of the bad value, or msgspec's words on the stage's type or a missing field: no text of the file
        _, at, path = str(error).rpartition(" - at `$")
        where = path.rstrip("`").lstrip(".") if at else str(error)
        raise LineError("results", f"the last stage is not {{\"swap = False\": {{\"winner\": ...}}, \"swap = True\": "
                                   f"...}} as LLMBar writes it ({where}: a winner is \"1\", \"2\" or null)") from None


def _digest(item: Item) -> str:
    """8 hex characters of the item's instruction and outputs: the same item in every file."""
    text = json.dumps([item.input, item.output_1, item.output_2], ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:8]


def _items(data: bytes) -> Iterator[tuple[int, bytes | LineError]]:
    """Each item of the document's list as (the line it starts on, its JSON text), and a
    LineError where the document stops being readable (the items after it are lost). A
    problem is put on a line that holds text (the import reads no trailing blank line)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        yield data.count(b"\n", 0, error.start) + 1, LineError(None, "not UTF-8 text; save the file as UTF-8")
        return
    lines, decoder, position = _Lines(text), json.JSONDecoder(), _blank(text, 0)
    last = len(text.rstrip()) - 1  # the document's last character
    if last < 0:
        return  # an empty file holds no item
    if not text.startswith("[", position):
        yield lines.at(position), LineError(None, "not a JSON list of items: is this LLMBar's result.json? see "
                                                  "council-db import --help")
        return
    position = _blank(text, position + 1)
    while not text.startswith("]", position):
        start = lines.at(min(position, last))
        try:
            _, end = decoder.raw_decode(text, position)
        except json.JSONDecodeError as error:
            yield start, LineError(None, f"not valid JSON ({error.msg} at line {error.lineno} column {error.colno}, "
                                         "in the item that starts here); the items after it cannot be read")
            return
        yield start, text[position:end].encode()
        position = _blank(text, end)
        if text.startswith(",", position):
            position = _blank(text, position + 1)
        elif not text.startswith("]", position):
            yield lines.at(min(position, last)), LineError(None, "not valid JSON (expected , or ] after an item); "
                                                                 "the items after it cannot be read")
            return


class _Lines:
    """The line of a position in the text, for positions asked in increasing order."""

    def __init__(self, text: str):
        self.text, self.position, self.line = text, 0, 1

    def at(self, position: int) -> int:
        self.line += self.text.count("\n", self.position, position)
        self.position = position
        return self.line


def _blank(text: str, position: int) -> int:
    """The first position at or after ``position`` that is not JSON whitespace."""
    while position < len(text) and text[position] in " \t\r\n":
        position += 1
    return position
