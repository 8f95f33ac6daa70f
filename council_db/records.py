"""From validated lines to rows: the normalisations of the data contract, cached per
distinct envelope and scale so a session's 16 records cost one normalisation."""

from __future__ import annotations

from dataclasses import dataclass, field

from council_db.contract import (
    DEFAULT_SCALE,
    Envelope,
    LineError,
    ScoreScale,
    envelope,
    envelope_fields,
    envelope_key,
    score_scale,
)
from council_db.lines import LineBatch, Parsed, Rejected, reject
from council_db.store import Row

CACHE_LIMIT = 100_000


@dataclass
class Normalised:
    rows: list[Row] = field(default_factory=list)
    rejected: list[Rejected] = field(default_factory=list)
    skipped: int = 0  # consent level 0: should never have been written
    excluded: int = 0  # kept, but out of scale


class Normaliser:
    def __init__(self) -> None:
        self._envelopes: dict[tuple, Envelope] = {}
        self._scales: dict[str, ScoreScale] = {}
        self._last_fields: tuple | None = None
        self._last_envelope: Envelope | None = None

    def _envelope(self, line: dict) -> Envelope:
        # Records of a session arrive together and share an envelope: comparing with the
        # previous line is much cheaper than hashing a key for every record.
        fields = envelope_fields(line)
        if fields == self._last_fields and type(fields[2]) is type(self._last_fields[2]):
            return self._last_envelope
        key = envelope_key(fields)
        found = self._envelopes.get(key)
        if found is None:
            if len(self._envelopes) > CACHE_LIMIT:
                self._envelopes.clear()
            found = self._envelopes[key] = envelope(line)
        self._last_fields, self._last_envelope = fields, found
        return found

    def _scale(self, name: str) -> ScoreScale:
        found = self._scales.get(name)
        if found is None:
            found = self._scales[name] = score_scale(name)
        return found

    def rows(self, parsed: Parsed, batch: LineBatch) -> Normalised:
        out = Normalised(rejected=list(parsed.rejected))
        append = out.rows.append
        for number, line in parsed.records:
            try:
                env = self._envelope(line)
                scale = self._scale(line.get("score_scale", DEFAULT_SCALE))
            except LineError as error:
                out.rejected.append(reject(number, error, batch.lines[number - batch.first_line]))
                continue
            if env.consent_level == 0:
                out.skipped += 1
                continue
            score = line["score_value"]
            exclusion = scale.exclusion(score) if not scale.low <= score <= scale.high else None
            if exclusion is not None:
                out.excluded += 1
            append((line["session_id"], env, line["reviewer_id"], line["model_id"], line["position"],
                    line["response_length_chars"], score, scale, exclusion))
        out.rejected.sort(key=lambda r: r.line_number)
        return out
