"""From validated lines to rows: the normalisations of the data contract, cached per
distinct envelope and scale so a session's 16 records cost one normalisation."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from council_db.contract import (
    DEFAULT_SCALE,
    ENVELOPE_KEYS,
    Envelope,
    LineError,
    ScoreScale,
    envelope,
    envelope_key,
    score_scale,
)
from council_db.lines import LineBatch, Parsed, Rejected, reject
from council_db.score_batch import ScoreBatch

CACHE_LIMIT = 100_000


@dataclass
class Normalised:
    rows: ScoreBatch = field(default_factory=ScoreBatch.empty)
    rejected: list[Rejected] = field(default_factory=list)
    skipped: int = 0  # consent level 0: should never have been written
    excluded: int = 0  # kept, but out of scale


class Normaliser:
    def __init__(self) -> None:
        self._envelopes: dict[tuple, Envelope] = {}
        self._scales: dict[str, ScoreScale] = {}

    def _envelope(self, line: dict, fields: tuple) -> Envelope:
        key = envelope_key(fields)
        found = self._envelopes.get(key)
        if found is None:
            if len(self._envelopes) > CACHE_LIMIT:
                self._envelopes.clear()
            found = self._envelopes[key] = envelope(line)
        return found

    def _scale(self, name: str) -> ScoreScale:
        found = self._scales.get(name)
        if found is None:
            found = self._scales[name] = score_scale(name)
        return found

    def rows(self, parsed: Parsed, batch: LineBatch) -> Normalised:
        """This is the importer's per-record loop, so it does only what must be done per
        record; ScoreBatch turns the kept records into columns in bulk."""
        out = Normalised(rejected=list(parsed.rejected))
        kept: list[dict] = []
        envelopes, scales = Distinct(), Distinct()
        envelope_codes: list[int] = []
        scale_codes: list[int] = []
        last_fields: tuple = ()
        env, scale_name, envelope_code, scale_code = None, None, 0, 0
        for number, line in parsed.records:
            # A session's records arrive together and share an envelope: comparing with the
            # previous line's fields is much cheaper than hashing a key for every record.
            fields = tuple(map(line.get, ENVELOPE_KEYS))
            try:
                if fields != last_fields or type(fields[2]) is not type(last_fields[2]):
                    env, last_fields = self._envelope(line, fields), fields
                    envelope_code = envelopes.code(env)
                name = line.get("score_scale", DEFAULT_SCALE)
                if name != scale_name:
                    scale_code, scale_name = scales.code(self._scale(name)), name
            except LineError as error:
                out.rejected.append(reject(number, error, batch.lines[number - batch.first_line]))
                continue
            if env.consent_level == 0:
                out.skipped += 1
                continue
            kept.append(line)
            envelope_codes.append(envelope_code)
            scale_codes.append(scale_code)
        out.rejected.sort(key=lambda r: r.line_number)
        out.rows = ScoreBatch.from_records(kept, envelopes.objects, envelope_codes, scales.objects, scale_codes)
        out.excluded = int(np.count_nonzero(out.rows.exclusion))
        return out


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
