"""Files that hold evidence or secrets: written private, read only when private.

Reports and exports are written 0600 when new (an existing file keeps its mode, as ``cp``
does): scores are evidence, like the database. A secret (the query-hash key, a push token)
is read only from a regular file of your own that no one else can read or change: a symlink
or a group- or world-readable file is refused with one line saying how to fix it.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import TextIO

from council_db.errors import CouncilDbError


def open_private(path: str | os.PathLike) -> TextIO:
    """A text file for writing, created 0600 when new; truncated when it exists."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    return open(descriptor, "w", encoding="utf-8", newline="")


def read_secret_file(path: Path, where: str) -> str:
    """The file's text, stripped; ``where`` names it in every refusal (e.g. 'VAR=/path'). No
    message ever holds a byte of the file."""
    try:
        info = os.lstat(path)
    except OSError as error:
        raise CouncilDbError(f"{where}: cannot read it ({error.strerror})") from None
    if stat.S_ISLNK(info.st_mode):
        raise CouncilDbError(f"{where} is a symlink; point it at the file itself")
    if not stat.S_ISREG(info.st_mode):
        raise CouncilDbError(f"{where} is not a regular file")
    if info.st_mode & 0o077:
        raise CouncilDbError(f"{where} has mode {stat.S_IMODE(info.st_mode):04o}: others could read or change "
                             f"the secret; run chmod 600 {path}")
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        raise CouncilDbError(f"{where} belongs to another user; use a file of your own")
    try:
        return path.read_text(encoding="utf-8").strip()
    except UnicodeDecodeError as error:  # the message leaves out the byte: it is part of the secret
        raise CouncilDbError(f"{where} is not UTF-8 text (byte {error.start} is not): write the secret as "
                             "text") from None
    except OSError as error:
        raise CouncilDbError(f"{where}: cannot read it ({error.strerror})") from None
