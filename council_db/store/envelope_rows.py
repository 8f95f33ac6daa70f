"""A batch's envelopes as the database keeps them: a session's in its ``sessions`` row, and
a record's own, where it differs from its session's (a judge log gives every grading its own
time), as a ``record_envelopes`` row named by its digest (contract.envelope)."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from council_db.contract.envelope import Envelope
from council_db.contract.score_batch import ScoreBatch

ENVELOPE_COLUMNS = ("timestamp", "ts_us", "consent_level", "schema_version", "schema_version_raw",
                    "council_config_version", "query_hash", "query_metadata")


def envelope_values(envelope: Envelope) -> tuple:
    """The envelope's ENVELOPE_COLUMNS."""
    return (envelope.timestamp, envelope.ts_us, envelope.consent_level, envelope.schema_version,
            envelope.schema_version_raw, envelope.council_config_version, envelope.query_hash,
            envelope.query_metadata)


def stored_envelope(columns: Sequence) -> tuple:
    """ENVELOPE_COLUMNS as read back, in the order of ``Envelope.stored`` (ts_us left out)."""
    timestamp, _ts_us, consent, version, version_raw, config, query_hash, metadata = columns
    return (timestamp, consent, version, version_raw, config, query_hash, metadata)


def own_envelopes(batch: ScoreBatch, stored: list[tuple]) -> tuple[list[Envelope | None], np.ndarray]:
    """Per distinct (session, envelope) pair of the batch: its envelope, or None where that is
    its session's (``stored``, per session of the batch); and each row's pair."""
    _, first_rows, inverse = np.unique(batch.session.astype(np.int64) * len(batch.envelopes) + batch.envelope,
                                       return_index=True, return_inverse=True)
    pairs = zip(batch.session[first_rows].tolist(), batch.envelope[first_rows].tolist())
    own = [None if batch.envelopes[envelope].stored == stored[session] else batch.envelopes[envelope]
           for session, envelope in pairs]
    return own, inverse.ravel()
