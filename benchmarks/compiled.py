"""Timed council-db processes start as they do on a user's install: from compiled bytecode.

Some machines set PYTHONDONTWRITEBYTECODE (this project's do); every process then compiles
council-db's modules from source again, tens of milliseconds of each start-up that an
installed council-db (pip compiles it) never pays. ``ENV`` is the environment without it,
for the processes a benchmark times; ``compile_council_db()`` writes the .pyc files once,
untimed, before anything is timed.
"""

from __future__ import annotations

import compileall
import importlib.util
import os
from pathlib import Path

ENV = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}


def compile_council_db() -> None:
    """The .pyc file of every council-db module (the untimed warm-up of its start-up)."""
    package = importlib.util.find_spec("council_db")
    compileall.compile_dir(Path(package.origin).parent, quiet=1)
