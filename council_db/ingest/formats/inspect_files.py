"""UK AISI Inspect's eval logs as files: the eval's header, then its samples one at a time.

Inspect (UKGovernmentBEIS/inspect_ai, log/_recorders/) writes a log in one of two layouts:
- ``.json``: one JSON document, ``{"version": 2, "status": ..., "eval": {...}, "plan": ...,
  "results": ..., "stats": ..., "samples": [...], "reductions": ...}``;
- ``.eval``: a ZIP archive of JSON files: the header (``header.json``; a log still being written,
  or one of Inspect before 0.3.50, has ``_journal/start.json`` or ``start.json``, which hold
  ``eval`` too), and each sample in ``samples/<id>_epoch_<epoch>.json``.
Either is read a sample at a time, so a large log is never held whole: a ``.eval`` entry by
entry, each sample numbered by its place among the archive's ``samples/`` entries; a ``.json``
as its text comes (inspect_document), each sample numbered by the line it starts on.
"""

from __future__ import annotations

import zipfile
import zlib
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Iterator, Union

import msgspec

from council_db.contract.fields import LineError
from council_db.errors import CouncilDbError
from council_db.ingest.formats.inspect_document import JsonLog
from council_db.ingest.formats.judge_lines import Name
from council_db.ingest.lines import LineBatch
from council_db.ingest.sources import Source

ZIP_MAGIC = b"PK\x03\x04"
LOCAL_HEADER = 30  # bytes of a ZIP entry's local header before its name and extra field
ENCRYPTED = 0x1
HEADERS = ("header.json", "_journal/start.json", "start.json")  # newest first: each holds "eval"
SAMPLES = "samples/"
BATCH_SAMPLES = 1_000
BATCH_BYTES = 16 * 1024 * 1024
KIND = "an Inspect eval log"


class Scorer(msgspec.Struct):
    name: str
    options: Union[dict[str, Any], None] = None


class RoleModel(msgspec.Struct):
    model: str
    config: Union[dict[str, Any], None] = None


class Spec(msgspec.Struct):
    """What a log's ``eval`` says that its records need."""

    task: Name
    model: Name
    eval_id: Union[str, None] = None
    run_id: Union[str, None] = None
    created: Union[str, None] = None
    scorers: Union[list[Scorer], None] = None
    model_roles: Union[dict[str, RoleModel], None] = None


class Header(msgspec.Struct):
    eval: Spec


@dataclass
class LogFile:
    """An opened log: its eval's spec, and its samples in batches, from a ``.json`` ``document``
    or a ``.eval`` ``archive``; ``broken``: the archive's samples that could not be read, by
    number, with why."""

    source: Source
    spec: Spec
    document: Union[JsonLog, None] = None
    archive: Union[zipfile.ZipFile, None] = None
    broken: dict[int, LineError] = field(default_factory=dict)

    def samples(self) -> Iterator[tuple[int, bytes]]:
        """(number, JSON text) of each sample, in the file's order."""
        if self.document is None:
            return self._archive_samples()
        return self.document.samples()

    def batches(self) -> Iterator[LineBatch]:
        """The samples in batches of at most BATCH_SAMPLES or about BATCH_BYTES, each sample at
        its number (the lines between the samples of a ``.json`` are empty). Only the last batch
        ends at the file's size: a log is read whole or, if the import stops, again from its start."""
        lines: list[bytes] = []
        start, samples, held = 1, 0, 0
        for number, text in self.samples():
            lines += [b""] * (number - start - len(lines)) + [text]
            samples, held = samples + 1, held + len(text)
            if samples == BATCH_SAMPLES or held >= BATCH_BYTES:
                yield LineBatch(start, lines, 0)
                start, lines, samples, held = number + 1, [], 0, 0
        yield LineBatch(start, lines, self.source.size or 0)

    def close(self) -> None:
        if self.archive is not None:
            self.archive.close()

    def _archive_samples(self) -> Iterator[tuple[int, bytes]]:
        assert self.archive is not None and self.source.path is not None
        entries = [info for info in self.archive.infolist() if _is_sample(info.filename)]
        with self.source.path.open("rb") as handle:
            for number, info in enumerate(entries, start=1):
                try:
                    yield number, _entry(handle, info) or self.archive.read(info)
                except (zipfile.BadZipFile, zlib.error, EOFError, OSError) as error:
                    self.broken[number] = LineError(None, f"the archive's {info.filename} cannot be read ({error}); "
                                                          "the other samples are read")
                    yield number, b""


def _entry(handle: BinaryIO, info: zipfile.ZipInfo) -> Union[bytes, None]:
    """A stored or deflated entry's bytes, read from the file and checked against its CRC: for
    a small entry this costs a quarter of ZipFile.read (54 against 15 us a sample, measured),
    which opens a shared handle and parses the entry's headers each time. None for an entry it
    leaves to ZipFile (encrypted, or another compression)."""
    if info.flag_bits & ENCRYPTED or info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        return None
    handle.seek(info.header_offset)
    local = handle.read(LOCAL_HEADER)
    if len(local) < LOCAL_HEADER or local[:4] != ZIP_MAGIC:
        raise zipfile.BadZipFile(f"no local header where the directory puts {info.filename}")
    handle.seek(int.from_bytes(local[26:28], "little") + int.from_bytes(local[28:30], "little"), 1)
    data = handle.read(info.compress_size)
    if info.compress_type == zipfile.ZIP_DEFLATED:
        data = zlib.decompress(data, -zlib.MAX_WBITS)
    if zlib.crc32(data) != info.CRC:
        raise zipfile.BadZipFile(f"Bad CRC-32 for file {info.filename!r}")
    return data


def open_log(source: Source) -> LogFile:
    """The log's header read, its samples not yet: CouncilDbError naming the file when it is no
    Inspect log."""
    check_file(source)
    if is_eval_archive(source):
        archive = _opened(source)
        return LogFile(source, _archive_header(source, archive), archive=archive)
    document = JsonLog(source.path)
    return LogFile(source, _document_header(source, document), document)


def check_file(source: Source) -> None:
    """CouncilDbError unless the log is a plain file: an archive is read by its directory at its
    end, and each pass over a log starts again from the file's start."""
    if source.path is None or source.kind != "file":
        raise CouncilDbError(f"{source.name}: {KIND} is read from its file (.json or .eval), not stdin, a pipe or "
                             ".gz; nothing was imported")


def is_eval_archive(source: Source) -> bool:
    """A ZIP archive by its first bytes (an Inspect ``.eval`` if its entries say so)."""
    if source.path is None or source.kind != "file":
        return False
    with source.path.open("rb") as handle:
        return handle.read(len(ZIP_MAGIC)) == ZIP_MAGIC


def check_archive(source: Source) -> None:
    """CouncilDbError naming the file when a ZIP archive cannot be read or is no Inspect log."""
    with _opened(source) as archive:
        _archive_header(source, archive)


def _opened(source: Source) -> zipfile.ZipFile:
    try:
        return zipfile.ZipFile(source.path)  # type: ignore[arg-type]
    except (zipfile.BadZipFile, zlib.error, EOFError) as error:
        raise CouncilDbError(f"{source.name}: a damaged ZIP archive ({error}): not readable as {KIND} (.eval); "
                             "nothing was imported") from None


def _archive_header(source: Source, archive: zipfile.ZipFile) -> Spec:
    names = set(archive.namelist())
    found = next((name for name in HEADERS if name in names), None)
    if found is None:
        raise CouncilDbError(f"{source.name}: a ZIP archive without {', '.join(HEADERS)}: not {KIND} (.eval); "
                             "nothing was imported")
    try:
        text = archive.read(found)
    except (zipfile.BadZipFile, zlib.error, EOFError) as error:
        raise CouncilDbError(f"{source.name}: a damaged ZIP archive ({error}): its {found} cannot be read; nothing "
                             "was imported") from None
    return _spec(source, text, found)


def _document_header(source: Source, document: JsonLog) -> Spec:
    """The spec from the document's ``eval``, which Inspect writes before its samples."""
    text = document.eval_text()
    if text is None:
        raise CouncilDbError(f"{source.name}: a JSON document without \"eval\": not {KIND} (.json); nothing was "
                             "imported")
    return _spec(source, text, "its eval", wrap=True)


def _spec(source: Source, text: bytes, where: str, wrap: bool = False) -> Spec:
    try:
        if wrap:
            return msgspec.json.decode(text, type=Spec)
        return msgspec.json.decode(text, type=Header).eval
    except msgspec.DecodeError as error:  # a ValidationError is a DecodeError too
        raise CouncilDbError(f"{source.name}: {where} is not an Inspect eval spec ({error}): not {KIND}; nothing was "
                             "imported") from None


def _is_sample(name: str) -> bool:
    return name.startswith(SAMPLES) and name.endswith(".json")
