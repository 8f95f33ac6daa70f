"""council-db: the database and bias auditor for LLM councils.

``council_db.connect()`` opens a database for recording sessions and reading reports;
``council_db.presentation_orders()`` gives reviewers balanced display orders. Both load
their modules on first use, so importing council_db (as the CLI does) stays cheap.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

if "numpy" not in sys.modules:
    # numpy's BLAS on one thread unless the user says otherwise, for the CLI and the Python API
    # alike (OpenBLAS reads it once, when numpy loads it). council-db's matrices are small:
    # OpenBLAS's worker threads spin for more CPU than they save, and on a busy machine cost
    # wall time too (bias-report --sessions 1000 on a 1M store: 0.57 against 0.85 CPU seconds;
    # a warm report(sessions=1000) on 2,000 sessions: 0.37 against 0.53; issue 32).
    for _variable in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_variable, "1")
    del _variable

__version__ = "0.1.0"
__all__ = ["connect", "presentation_orders", "Council", "BiasReport", "__version__"]

if TYPE_CHECKING:
    from council_db.api import Council
    from council_db.ingest.orders import Orders
    from council_db.report.model import BiasReport


def connect(url: str | None = None) -> Council:
    """Open (upgrading) a database: a file path or SQLAlchemy URL; default $COUNCIL_DB, else
    council.db in the user data directory. A file that is not there is created by the first
    record_session, never by reading: report() on it is an error."""
    from council_db.api import connect as _connect

    return _connect(url)


def presentation_orders(models: list[str], reviewers: list[str], *, seed: int | None = None,
                        design: str = "latin") -> Orders:
    """The display order each reviewer should see, in llm-council's label_to_model form."""
    from council_db.ingest.orders import presentation_orders as _orders

    return _orders(models, reviewers, seed=seed, design=design)


def __getattr__(name: str) -> Any:
    if name == "Council":
        from council_db.api import Council

        return Council
    if name == "BiasReport":
        from council_db.report.model import BiasReport

        return BiasReport
    raise AttributeError(f"module 'council_db' has no attribute {name!r}")
