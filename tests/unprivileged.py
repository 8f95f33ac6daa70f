"""council-db in a real process that file permissions apply to, for tests of unreadable files
and read-only directories.

Root ignores permission bits through two capabilities (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH).
Switching to another user (as tests/postgres.py does for the server) is not enough here: the
interpreter may live where only root can reach it (e.g. pyenv under /root). So as root the
process keeps its user but runs with those two capabilities removed from its bounding set
(util-linux's setpriv), and mode 000 or a 0555 directory stop it as they stop any user."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

DROP_PERMISSION_OVERRIDES = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search"]


def why_unavailable() -> str | None:
    if os.geteuid() != 0:
        return None
    if shutil.which("setpriv") is None:
        return "running as root and setpriv (util-linux) is missing, so permission bits cannot be made to apply"
    if subprocess.run([*DROP_PERMISSION_OVERRIDES, "true"], capture_output=True).returncode != 0:
        return "running as root and not allowed to drop capabilities (setpriv failed), so permission bits cannot apply"
    return None


def run(*args: str, cwd: Path | None = None, input: bytes | None = None) -> subprocess.CompletedProcess:
    """``python -m council_db ARGS`` bound by file permissions, as a user sees it."""
    prefix = DROP_PERMISSION_OVERRIDES if os.geteuid() == 0 else []
    return subprocess.run([*prefix, sys.executable, "-m", "council_db", *args], cwd=cwd, input=input,
                          capture_output=True, timeout=120)
