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
        envelopes: list[Envelope] = []
        scales: list[ScoreScale] = []
        last_fields: tuple = ()
        env, scale = None, None
        for number, line in parsed.records:
            # A session's records arrive together and share an envelope: comparing with the
            # previous line's fields is much cheaper than hashing a key for every record.
            fields = tuple(map(line.get, ENVELOPE_KEYS))
            try:
                if fields != last_fields or type(fields[2]) is not type(last_fields[2]):
                    env, last_fields = self._envelope(line, fields), fields
                name = line.get("score_scale", DEFAULT_SCALE)
                if scale is None or name != scale.name:
                    scale = self._scale(name)
            except LineError as error:
                out.rejected.append(reject(number, error, batch.lines[number - batch.first_line]))
                continue
            if env.consent_level == 0:
                out.skipped += 1
                continue
            kept.append(line)
            envelopes.append(env)
            scales.append(scale)
        out.rejected.sort(key=lambda r: r.line_number)
        out.rows = ScoreBatch.from_records(kept, envelopes, scales)
        out.excluded = int(np.count_nonzero(out.rows.exclusion))
        return out
