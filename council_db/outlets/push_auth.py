"""Credentials for council-db push, kept off the command line and out of every message.

A value on the command line stays in shell history and shows in ``ps``, so none is taken
there: a bearer token comes from $COUNCIL_DB_PUSH_TOKEN or from a private file
(``--token-file``, checked like the query-hash key file), and any other header from an
environment variable named on the command line (``--header-env X-Api-Key=VAR``: the name is
not secret, the value is). The values never reach the outbox, an error or stderr:
``Credentials.redact`` masks them in any text built from a service's answer.
"""

from __future__ import annotations

import ipaddress
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence
from urllib.parse import urlparse

from council_db.errors import CouncilDbError, UsageError
from council_db.private_files import read_secret_file

TOKEN_ENV = "COUNCIL_DB_PUSH_TOKEN"
HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")  # an HTTP token (RFC 9110)
CONTROL = re.compile(r"[\x00-\x1f\x7f]")
MASK = "[redacted]"


@dataclass(frozen=True)
class Credentials:
    """Headers to send; ``source`` says where they came from (never what they are)."""

    headers: dict[str, str] = field(default_factory=dict, repr=False)
    source: str = ""
    secrets: tuple[str, ...] = field(default=(), repr=False)

    def redact(self, text: str) -> str:
        """``text`` with every secret value masked (a service may echo what it got)."""
        for secret in sorted(self.secrets, key=len, reverse=True):
            text = text.replace(secret, MASK)
        return text


def _checked_value(value: str, where: str) -> str:
    """A header value that is one line; the message names where it came from, not what it is."""
    if CONTROL.search(value):
        raise CouncilDbError(f"{where} holds a line break or control character: a header value is one line")
    return value


def _bearer(token_file: Path | None, environ: Mapping[str, str]) -> tuple[str, str] | None:
    """(token, where it came from), or None when no token is given."""
    from_env = environ.get(TOKEN_ENV, "").strip()
    if from_env and token_file is not None:
        raise UsageError(f"both ${TOKEN_ENV} and --token-file give a token: unset one")
    if from_env:
        return _checked_value(from_env, f"${TOKEN_ENV}"), f"${TOKEN_ENV}"
    if token_file is None:
        return None
    where = f"--token-file {token_file}"
    token = read_secret_file(token_file, where)
    if not token:
        raise CouncilDbError(f"{where} is empty: write the token in it")
    return _checked_value(token, where), where


def _named_header(option: str, environ: Mapping[str, str]) -> tuple[str, str]:
    """(header name, value) for ``--header-env NAME=VARIABLE``."""
    name, _, variable = option.partition("=")
    name, variable = name.strip(), variable.strip()
    if not name or not variable:
        raise UsageError(f"--header-env {option}: give NAME=VARIABLE, e.g. X-Api-Key=TELEMETRY_KEY (the value "
                         "is read from the environment variable, never from the command line)")
    if not HEADER_NAME.match(name):
        raise UsageError(f"--header-env {option}: {name!r} is not a header name")
    value = environ.get(variable, "").strip()
    if not value:
        raise CouncilDbError(f"--header-env {option}: ${variable} is not set or empty")
    return name, _checked_value(value, f"${variable}")


def load_credentials(token_file: Path | None = None, header_env: Sequence[str] = (),
                     environ: Mapping[str, str] = os.environ) -> Credentials:
    """The headers a push authenticates with; no credentials at all is fine (an open service)."""
    headers: dict[str, str] = {}
    sources, secrets = [], []
    bearer = _bearer(token_file, environ)
    if bearer is not None:
        headers["Authorization"] = f"Bearer {bearer[0]}"
        sources.append(bearer[1])
        secrets.append(bearer[0])
    for option in header_env:
        name, value = _named_header(option, environ)
        if name.lower() in {known.lower() for known in headers}:
            taken = "the token already sets Authorization" if name.lower() == "authorization" and bearer else (
                f"{name} is given twice")
            raise UsageError(f"--header-env {option}: {taken}")
        headers[name] = value
        sources.append(f"--header-env {option}")
        secrets.append(value)
    return Credentials(headers, " and ".join(sources), tuple(secrets))


def plain_http_warning(endpoint: str, credentials: Credentials) -> str | None:
    """A warning when credentials would cross the network unencrypted (loopback is fine)."""
    parsed = urlparse(endpoint)
    if not credentials.headers or parsed.scheme != "http" or _loopback(parsed.hostname or ""):
        return None
    return (f"warning: the credentials from {credentials.source} go to {parsed.hostname} over plain http, "
            "readable by anyone on the way; use https")


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
