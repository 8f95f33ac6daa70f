"""From validated lines to rows: the normalisations of the data contract, cached per
distinct envelope and scale so a session's 16 records cost one normalisation."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from itertools import compress
from operator import attrgetter, ne
from typing import Callable

import numpy as np

from council_db.contract.envelope import ENVELOPE_KEYS, Envelope, envelope, envelope_key
from council_db.contract.fields import DEFAULT_CONSENT, MAX_SLOT, UNKNOWN_LENGTH, LineError
from council_db.contract.record import Record
from council_db.contract.record_columns import RecordColumns
from council_db.contract.scales import ScoreScale, score_scale
from council_db.contract.score_batch import ENVELOPE_TIME, ScoreBatch
from council_db.ingest.column_batch import score_batch
from council_db.ingest.lines import LineBatch, Parsed, Rejected, parse_batch, reject

CACHE_LIMIT = 100_000
PARSE_LINES = 500
COUNTS = ("skipped", "excluded", "no_position", "unknown_length", "no_verdict")  # Normalised's, summed by joined


@dataclass
class Normalised:
    rows: ScoreBatch = field(default_factory=ScoreBatch.empty)
    rejected: list[Rejected] = field(default_factory=list)
    skipped: int = 0  # consent level 0: should never have been written
    excluded: int = 0  # kept, but out of scale
    no_position: int = 0  # kept at position 0 (fields.DEFAULT_POSITION), out of position analyses
    unknown_length: int = 0  # kept with fields.UNKNOWN_LENGTH, out of length analyses
    no_verdict: int = 0  # judgments a format reads but that hold no score (ingest/formats)

    @classmethod
    def joined(cls, parts: list[Normalised]) -> Normalised:
        """The parts' rows and rejected lines, in order, as one."""
        if len(parts) == 1:
            return parts[0]
        return cls(ScoreBatch.concat([part.rows for part in parts]),
                   [rejected for part in parts for rejected in part.rejected],
                   *(sum(getattr(part, name) for part in parts) for name in COUNTS))

    def count_rows(self) -> None:
        """The counts ``rows`` tells: out of scale, without a position, of unknown length."""
        self.excluded = int(np.count_nonzero(self.rows.exclusion))
        self.no_position = len(self.rows) - int(np.count_nonzero(self.rows.position_given))
        self.unknown_length = int(np.count_nonzero(self.rows.length == UNKNOWN_LENGTH))


class Normaliser:
    """Lines to rows: ``parse`` reads a batch of lines into validated records (llm-council's
    by default; ingest/formats has one for each format), the rest is the same for all."""

    def __init__(self, parse: Callable[[LineBatch], Parsed] = parse_batch) -> None:
        self.parse = parse
        self._envelopes: dict[tuple, Envelope] = {}
        self._timeless: dict[tuple, Envelope] = {}  # by envelope_key without the time, and the time's form
        self._dated: dict[tuple, set] = {}  # envelope_key without the time -> the times of _envelopes' keys
        self._sessions: set[str] = set()  # the sessions of the runs normalised so far
        self._scales: dict[str, ScoreScale] = {}

    def _envelope(self, record: Record, fields: tuple) -> tuple[Envelope, int]:
        """The record's envelope, and its own time (ENVELOPE_TIME: none) where its session came
        before and only the time sets it apart from an envelope made before: a judge log gives
        every grading its own time, and an envelope a record cost the reader 14 us a record and
        the writer a row. A session's first record gets its envelope, which a new session takes."""
        key, form = envelope_key(fields), _form(fields[0])
        found = self._known(key, form, record.session_id)
        return found or (self._new(key, form, self._made(key, form, record.timestamp, lambda: record)), ENVELOPE_TIME)

    def _known(self, key: tuple, form: str | None, session: str) -> tuple[Envelope, int] | None:
        """``_envelope`` of a record with envelope_key ``key`` in ``session`` where it needs no
        new envelope; None where it does."""
        found = self._envelopes.get(key)
        if found is not None:
            return found, ENVELOPE_TIME
        base = self._timeless.get((form, *key[1:]))
        if base is not None and session in self._sessions:
            time = key[0]
            own = (time or None) if isinstance(time, int) else base.own_time(time)  # 0: store.pg_copy's NULL
            if own is not None:
                return base, own
        return None

    def _new(self, key: tuple, form: str | None, made: Envelope) -> Envelope:
        """A record's own envelope (``made``), kept for the records after it."""
        if len(self._envelopes) > CACHE_LIMIT:
            self._envelopes.clear()
            self._timeless.clear()
            self._dated.clear()
        found = self._envelopes[key] = made
        self._timeless.setdefault((form, *key[1:]), found)
        self._dated.setdefault(key[1:], set()).add(key[0])
        return found

    def _seen(self, session: str) -> None:
        if len(self._sessions) > CACHE_LIMIT:
            self._sessions.clear()
        self._sessions.add(session)

    def _scale(self, name: str) -> ScoreScale:
        found = self._scales.get(name)
        if found is None:
            found = self._scales[name] = score_scale(name)
        return found

    def normalise(self, batch: LineBatch) -> Normalised:
        """A batch of lines validated and normalised in slices of PARSE_LINES, as one.

        Each pass over a slice's records then finds them in the processor's cache: measured
        on lines streamed from a large file, 2.6-2.9 us a record in slices of 500 against
        5.8-6.4 us in one slice of 2,000. The writer wants the opposite (each batch has a
        fixed cost), so the slices are joined again."""
        return Normalised.joined([self.rows(self.parse(part), part) for part in batch.slices(PARSE_LINES)])

    def rows(self, parsed: Parsed, batch: LineBatch) -> Normalised:
        """The importer's per-record step, done per run instead: a session's records arrive
        together and share an envelope and a scale, so consecutive records with the same
        ones are normalised once, and finding the runs takes C-speed passes only."""
        columns = getattr(parsed, "columns", None)
        if columns is not None:
            return self._column_rows(parsed, columns)
        out = Normalised(rejected=list(parsed.rejected), no_verdict=parsed.no_verdict)
        numbers, records = zip(*parsed.records) if parsed.records else ((), ())
        keys = list(map(_RUN_KEY, records))
        starts = run_starts(keys)
        envelopes, scales = Distinct(), Distinct()
        codes: list[tuple[int, int] | None] = []  # per run: its envelope and scale, None when left out
        times: list[int] = []  # per run: its own time, or ENVELOPE_TIME
        for start, end in zip(starts, starts[1:]):
            try:
                env, time = self._envelope(records[start], keys[start][:-1])
                self._seen(records[start].session_id)
                scale = self._scale(keys[start][-1])
            except LineError as error:
                out.rejected += [reject(number, error, batch.lines[number - batch.first_line])
                                 for number in numbers[start:end]]
                codes.append(None)
                continue
            if env.consent_level == 0:
                out.skipped += end - start
                codes.append(None)
                continue
            codes.append((envelopes.code(env), scales.code(scale)))
            times.append(time)
        lengths = np.diff(starts)
        keep = np.repeat(np.array([code is not None for code in codes], dtype=bool), lengths)
        run_codes = np.array([code or (-1, -1) for code in codes], dtype=np.int32).reshape(-1, 2)
        run_times = _run_times(times, codes)
        out.rows = _batch(records, keep, run_codes, lengths, envelopes, scales, run_times)
        beyond = _beyond_slots(out.rows)
        if beyond.any():  # rare: rejected, and the batch made again without them
            refused = np.flatnonzero(keep)[beyond]
            out.rejected += [_beyond_slot(numbers[i], records[i].position, batch) for i in refused.tolist()]
            keep[refused] = False
            out.rows = _batch(records, keep, run_codes, lengths, envelopes, scales, run_times)
        out.rejected.sort(key=lambda r: r.line_number)
        out.count_rows()
        return out

    def _column_rows(self, parsed: Parsed, columns: RecordColumns) -> Normalised:
        """``rows`` of a batch its reader made columns of: the same envelope for each run of
        records, decided as ``_envelope`` decides it, with no record struct but for a session's
        first record. The reader held the columns to the contract (their envelopes cannot fail)."""
        out = Normalised(rejected=list(parsed.rejected), no_verdict=parsed.no_verdict)
        if not len(columns):
            return out
        scale = self._scale(columns.score_scale)
        rests = [envelope_key((None, DEFAULT_CONSENT, columns.schema_version, None, None,
                               None if found is None else {"category": found}))[1:]
                 for found in columns.categories or [None]]
        category = np.zeros(len(columns), dtype=np.int32) if columns.category is None else columns.category
        changed = category[1:] != category[:-1]
        if columns.times is not None:
            changed |= columns.times[1:] != columns.times[:-1]
        starts = np.concatenate([[0], np.flatnonzero(changed) + 1])
        times = [""] * len(starts) if columns.times is None else columns.times[starts].tolist()
        form, runs = _form(columns.time_like or times[0]), category[starts]
        sessions = [columns.session_keys[code] for code in columns.session[starts].tolist()]
        envelopes, at_once = Distinct(), self._at_once(rests, form, times, runs, sessions)
        if at_once is not None:
            by_rest = np.zeros(len(rests), dtype=np.int32)
            for rest, found in at_once.items():
                by_rest[rest] = envelopes.code(found)
            codes, own = by_rest[runs], [ENVELOPE_TIME] * len(times) if columns.times is None else times
        else:
            codes, own = self._run_by_run(columns, starts.tolist(), rests, form, times, runs.tolist(), sessions,
                                          envelopes)
        lengths = np.diff(np.append(starts, len(columns)))
        run_times = None if own.count(ENVELOPE_TIME) == len(own) else np.repeat(np.array(own, dtype=np.int64), lengths)
        out.rows = score_batch(columns, envelopes.objects, np.repeat(np.array(codes, dtype=np.int32), lengths), scale,
                               run_times)
        out.count_rows()
        return out

    def _run_by_run(self, columns: RecordColumns, starts: list[int], rests: list[tuple], form: str | None,
                    times: list, runs: list[int], sessions: list[str], envelopes: Distinct) -> tuple[list, list]:
        """Each run's envelope code and own time, decided as ``_envelope`` decides a record's
        (a session's first record made for the envelope it needs)."""
        if (columns.times is not None and len(self._envelopes) + len(starts) <= CACHE_LIMIT
                and len(self._sessions) + len(starts) <= CACHE_LIMIT):  # no cache is cleared on the way
            return self._dated_runs(columns, starts, rests, form, times, runs, sessions, envelopes)
        codes, own = [], []
        for start, time, rest, session in zip(starts, times, runs, sessions):
            key = (time, *rests[rest])
            found, own_time = self._known(key, form, session) or (
                self._new(key, form, self._made(key, form, columns.time(start), partial(columns.record, start))),
                ENVELOPE_TIME)
            self._seen(session)
            codes.append(envelopes.code(found))
            own.append(own_time)
        return codes, own

    def _dated_runs(self, columns: RecordColumns, starts: list[int], rests: list[tuple], form: str | None,
                    times: list[int], runs: list[int], sessions: list[str], envelopes: Distinct) -> tuple[list, list]:
        """``_run_by_run`` of dated runs where no cache is cleared on the way: the same
        decisions, with an envelope code's base and its times looked up once a batch, not a
        run (a pairwise log's every line is a new session: _known, _made and _new hashed the
        envelope's fields four times a run). A code without a base yet takes ``_run_by_run``'s
        way for its run."""
        bases = {rest: self._timeless.get((form, *rests[rest])) for rest in set(runs)}
        dated = {rest: self._dated.setdefault(rests[rest], set()) for rest in bases}
        codes, own, seen = [], [], self._sessions
        for start, time, rest, session in zip(starts, times, runs, sessions):
            base, known = bases[rest], dated[rest]
            if time in known:
                found, own_time = self._envelopes[(time, *rests[rest])], ENVELOPE_TIME
            elif base is not None and time and session in seen:
                found, own_time = base, time
            elif base is not None:
                found = self._envelopes[(time, *rests[rest])] = base.at(columns.time(start))
                known.add(time)
                own_time = ENVELOPE_TIME
            else:
                key = (time, *rests[rest])
                found, own_time = self._new(key, form, self._made(key, form, columns.time(start),
                                                                  partial(columns.record, start))), ENVELOPE_TIME
                bases[rest] = self._timeless[(form, *rests[rest])]
            seen.add(session)
            codes.append(envelopes.code(found))
            own.append(own_time)
        return codes, own

    def _made(self, key: tuple, form: str | None, given: str | int | None, record: Callable[[], Record]) -> Envelope:
        """A new session's envelope: where its time (``given``) is all that sets it apart from
        an envelope made before (a judge log's next question, llm-council's next session),
        that one at its time (Envelope.at: the same in every field); else its first record's
        (``record``). A session's envelope made from its record was the reading processes'
        largest cost for a judge log of a session a line."""
        base = self._timeless.get((form, *key[1:]))
        return envelope(record()) if base is None else base.at(given)

    def _at_once(self, rests: list[tuple], form: str | None, times: list, runs: np.ndarray,
                 sessions: list[str]) -> dict[int, Envelope] | None:
        """Per envelope code (``rests``: envelope_key without the time) of the runs, the envelope
        ``_known`` gives every run with it, where that is told for all runs at once; None where
        it is not. Undated runs each take the envelope made before; dated ones, where every
        session came before and no time is 0 or has an envelope of its own, their envelope's
        base and their own time (a grading of a known session)."""
        used = np.unique(runs).tolist()
        if len(self._sessions) + len(sessions) > CACHE_LIMIT:  # _seen forgets them on its way
            return None
        if times[0] == "":
            found = {code: self._envelopes.get(("", *rests[code])) for code in used}
        elif 0 in times or not all(map(self._sessions.__contains__, sessions)):
            return None
        else:
            found = {code: None if self._own_envelope(rests[code], np.asarray(times)[runs == code].tolist())
                     else self._timeless.get((form, *rests[code])) for code in used}
        if None in found.values():
            return None
        self._sessions.update(sessions)
        return found  # type: ignore[return-value]

    def _own_envelope(self, rest: tuple, times: list[int]) -> bool:
        """Whether any of the times has an envelope of its own (``_new`` made one)."""
        dated = self._dated.get(rest)
        return bool(dated) and any(map(dated.__contains__, times))


def _form(time: str | int | None) -> str | None:
    """What sets a time's text apart besides the instant: the separator of its date and time
    (" " or "T"); a time a reader gave as a number is written as time_text writes it ("T")."""
    if isinstance(time, int):
        return "T"
    return time[10:11] if isinstance(time, str) else None


def _run_times(times: list[int], codes: list) -> np.ndarray | None:
    """Per run (left-out runs included, as ENVELOPE_TIME): its own time; None when no run has one."""
    if times.count(ENVELOPE_TIME) == len(times):
        return None
    kept = iter(times)
    return np.array([ENVELOPE_TIME if code is None else next(kept) for code in codes], dtype=np.int64)


def _batch(records: tuple, keep: np.ndarray, run_codes: np.ndarray, lengths: np.ndarray, envelopes: Distinct,
           scales: Distinct, run_times: np.ndarray | None) -> ScoreBatch:
    """The kept records as columns, each with its run's envelope, scale and own time."""
    per_record = np.repeat(run_codes, lengths, axis=0)[keep]
    kept = list(records) if keep.all() else list(compress(records, keep.tolist()))
    times = None if run_times is None else np.repeat(run_times, lengths)[keep]
    return ScoreBatch.from_records(kept, envelopes.objects, per_record[:, 0], scales.objects, per_record[:, 1],
                                   times)


def _beyond_slots(rows: ScoreBatch) -> np.ndarray:
    """Per row: a display slot (schema >= 1.2.0, position given) past MAX_SLOT. A position
    that is no display slot is only a key, and may be larger."""
    if not len(rows) or int(rows.position.max()) <= MAX_SLOT:
        return np.zeros(len(rows), dtype=bool)
    display = np.array([envelope.display_order for envelope in rows.envelopes], dtype=bool)[rows.envelope]
    return (rows.position > MAX_SLOT) & display & rows.position_given


def _beyond_slot(number: int, position: int, batch: LineBatch) -> Rejected:
    problem = LineError("position", f"{position} is not a display slot (at most {MAX_SLOT:,} from schema 1.2.0 on); "
                                    "give the slot the answer was shown in, 0 = first")
    return reject(number, problem, batch.lines[number - batch.first_line])


# What a run of records shares: the envelope's fields (contract.ENVELOPE_KEYS), then the scale.
_RUN_KEY = attrgetter(*ENVELOPE_KEYS, "score_scale")


def run_starts(keys: list[tuple]) -> list[int]:
    """Where each run of equal consecutive keys starts, and finally len(keys)."""
    changed = map(ne, keys[1:], keys[:-1])
    return [0, *compress(range(1, len(keys)), changed), len(keys)] if keys else [0]


class Distinct:
    """Objects numbered in order of first appearance, by identity: the normaliser reuses
    one object per distinct envelope and scale, and hashing a dataclass costs more."""

    def __init__(self) -> None:
        self.objects: list = []
        self._codes: dict[int, int] = {}

    def code(self, value: object) -> int:
        found = self._codes.get(id(value))
        if found is None:
            found = self._codes[id(value)] = len(self.objects)
            self.objects.append(value)
        return found
