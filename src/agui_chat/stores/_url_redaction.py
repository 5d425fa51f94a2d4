"""Naming a store URL in messages without its password."""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

__all__ = ["redact_url"]

# A password given as an option (libpq's ``?password=...`` or ``password=... host=...``).
_OPTION_PASSWORD = re.compile(r"(?i)(password=)[^&\s]*")


def redact_url(url: str) -> str:
    """``url`` with its password (if any: in the address, or as a ``password=`` option)
    replaced by ``***``, to name it in errors."""
    try:
        parts = urlsplit(url)
        if parts.password is not None:
            netloc = f"{parts.username or ''}:***@{parts.hostname or ''}"
            if parts.port:
                netloc += f":{parts.port}"
            url = urlunsplit(parts._replace(netloc=netloc))
    except ValueError:
        return "<a store URL that does not parse>"
    return _OPTION_PASSWORD.sub(r"\1***", url)
