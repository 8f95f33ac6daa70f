"""``--from csv``: any table of scores, one row a record, its columns named by a header row and
mapped to roles (``--map session=qid,candidate=model,reviewer=judge,score=rating``).

The dialect is RFC 4180's: a header row first, fields separated by a comma (or ``--delimiter``;
a header with tabs and no comma is read as tab-separated), quoted with double quotes where
they hold the separator, a quote (doubled) or a line break, UTF-8 with or without a byte order
mark. Rows are read as lines (ingest/lines.py) kept whole across line breaks in quoted fields
(ingest/quoted_rows.py), so a file of any size is read in batches by worker processes, a row
is numbered by the line it starts on, and a file that grew is resumed like a JSON Lines file.
"""

from __future__ import annotations

import csv
import io
from itertools import compress
from operator import itemgetter
from typing import Iterable

from council_db.contract.fields import LineError
from council_db.errors import CouncilDbError
from council_db.ingest.formats.judge_lines import BOM
from council_db.ingest.formats.mapping import suggested_map
from council_db.ingest.formats.options import FormatOptions
from council_db.ingest.formats.table_rows import TableReader, Value, shown_columns
from council_db.ingest.lines import LineBatch


class Reader(TableReader):
    FORMAT = "csv"
    COLUMNS = "the header's columns"

    def read_head(self, sample: bytes, options: FormatOptions) -> None:
        """The header row: the columns, which line it ends on, and the delimiter."""
        try:
            text = sample.removeprefix(BOM).decode("utf-8")
        except UnicodeDecodeError as error:
            if error.start < len(sample) - 4:  # not just a character cut at the sample's end
                raise CouncilDbError(f"{self.source_name}: not UTF-8 text (byte {error.start + 1}); save the file "
                                     "as UTF-8") from None
            text = sample.removeprefix(BOM)[:error.start].decode("utf-8")
        first_line = text.lstrip("\r\n").split("\n", 1)[0]
        self.delimiter = options.delimiter or ("\t" if "\t" in first_line and "," not in first_line else ",")
        self.head_text = text
        rows = csv.reader(io.StringIO(text), delimiter=self.delimiter)
        header = next((row for row in rows if row), None)
        if header is None:
            raise CouncilDbError(f"{self.source_name}: no header row; the first line of a CSV must name its columns")
        lines = sample.removeprefix(BOM).split(b"\n")
        start = next(number for number, line in enumerate(lines) if line.strip())
        self.header = b"\n".join(lines[start:rows.line_num]).rstrip(b"\r")
        self.columns = [column.strip() for column in header]
        self.refuse_missing(self.columns)
        self.index = self._indexes()

    def _indexes(self) -> dict[str, int]:
        """Each role's column number in a row, refusing a column the header does not have."""
        found = {}
        for role, column in self.roles.items():
            if column not in self.columns:
                hint = " (is the delimiter right? see --delimiter)" if len(self.columns) == 1 else ""
                raise CouncilDbError(f"{self.source_name}: no column {column!r} for {role}; {self.COLUMNS} "
                                     f"{shown_columns(self.columns)}{hint}: e.g. --map "
                                     f"{suggested_map(self.columns)}")
            if self.columns.count(column) > 1:
                raise CouncilDbError(f"{self.source_name}: the header names {column!r} twice; rename one of them")
            found[role] = self.columns.index(column)
        return found

    def sample_rows(self, cut: bool) -> Iterable[Value]:
        rows = csv.reader(io.StringIO(self.head_text), delimiter=self.delimiter)
        read = [row for row in rows if row][1:]
        for row in read[:-1] if cut else read:
            if len(row) == len(self.columns):
                yield row.__getitem__

    def key_of(self, role: str) -> int:
        return self.index[role]

    def row_lines(self, batch: LineBatch) -> list[tuple[int, bytes, bytes]]:
        """Every line but blank ones and the header: a line equal to the header is the header
        (a worker reading a segment cannot tell the file's first line, and files joined with
        cat repeat it). Told for the whole batch at once where only empty lines can be either
        (none starts with a blank, no byte order mark, the header nowhere); a row's quoted line
        breaks leave empty lines in its place (quoted_rows.whole_rows)."""
        lines = batch.lines
        joined = b"\n".join(lines)
        # the least line starts after " " (and so after "\t" and "\r"): so does every line
        if (min(filter(None, lines), default=b"!")[:1] > b" " and BOM[:1] not in joined
                and self.header not in joined):
            return list(compress(zip(range(batch.first_line, batch.first_line + len(lines)), lines, lines), lines))
        found = []
        for number, raw in enumerate(batch.lines, start=batch.first_line):
            text = raw.removeprefix(BOM)  # files joined with cat keep each one's byte order mark
            if text.strip(b" \t\r") and text.rstrip(b"\r") != self.header:
                found.append((number, raw, text))
        return found

    def rows_at_once(self, lines: list[tuple[int, bytes, bytes]]) -> list[list[str]]:
        """The rows read by one CSV reader: faster than one each, and as exact while every line
        gives one row of the header's width (LineError otherwise: the lines are then read one
        by one, which says what is wrong with each)."""
        try:
            texts = list(map(bytes.decode, [text for _, _, text in lines]))  # UTF-8, strict
            if "\r" in "".join(texts):  # CRLF line ends: one look for the batch
                texts = [text.removesuffix("\r") for text in texts]
            reader = csv.reader(texts, delimiter=self.delimiter, strict=True)
            rows = list(reader)
        except (UnicodeDecodeError, csv.Error):
            raise LineError(None, "a line to read on its own") from None
        width = len(self.columns)
        if len(rows) != len(texts) or reader.line_num != len(texts) or any([len(row) != width for row in rows]):
            raise LineError(None, "a line to read on its own")
        return rows

    def column(self, rows: list, key: int) -> list:
        return list(map(itemgetter(key), rows))

    def _decoded(self, text: bytes) -> Value:
        """The row's values by role, or a LineError saying why it is no row of the table."""
        try:
            line = text.decode("utf-8")
        except UnicodeDecodeError as error:
            raise LineError(None, f"not UTF-8 text (byte 0x{text[error.start]:02x} at byte {error.start + 1}); save "
                                  "the file as UTF-8") from None
        try:
            row = next(csv.reader((line.removesuffix("\r"),), delimiter=self.delimiter, strict=True))
        except csv.Error as error:
            if "field limit" in str(error):
                raise LineError(None, f"a field of more than {csv.field_size_limit():,} characters, more than Python's "
                                      "csv module reads; map length to a column of the answer's length instead of "
                                      "its text, or shorten the field") from None
            raise LineError(None, f"not a CSV row ({error}); quote a field that holds the delimiter, a quote or a "
                                  'line break, and double a quote inside one ("")') from None
        if len(row) != len(self.columns):
            raise LineError(None, f"{len(row)} fields where the header has {len(self.columns)}; quote a field that "
                                  "holds the delimiter")
        return row.__getitem__

