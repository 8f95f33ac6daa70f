"""Importing council_db before numpy, as the Python API's users do, leaves OpenBLAS one thread
as the CLI always did (issue 32: its threads made a warm report(sessions=1000) take 0.53 s of
CPU against 0.37 s, and a 16,000-element dot product 73 ms on a busy machine), unless the
user set OPENBLAS_NUM_THREADS; once numpy is loaded it is too late to matter, and the
environment is left as it was."""

from __future__ import annotations

import os
import subprocess
import sys

SHOW = "import os, sys; {first}; print(os.environ.get('OPENBLAS_NUM_THREADS'))"


def threads_seen(first: str, **environment: str) -> str:
    env = {name: value for name, value in os.environ.items() if name != "OPENBLAS_NUM_THREADS"}
    answer = subprocess.run([sys.executable, "-c", SHOW.format(first=first)], env={**env, **environment},
                            capture_output=True, text=True, check=True)
    return answer.stdout.strip()


def test_council_db_imported_first_gives_openblas_one_thread():
    assert threads_seen("import council_db, numpy") == "1"


def test_a_users_own_openblas_setting_is_kept():
    assert threads_seen("import council_db, numpy", OPENBLAS_NUM_THREADS="2") == "2"


def test_numpy_imported_first_is_left_as_the_user_started_it():
    assert threads_seen("import numpy, council_db") == "None"
