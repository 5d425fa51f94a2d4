"""Secrets in the URLs the library is given (an approval store's, a provider's ``base_url``, an
MCP server's ``url``, an AG-UI endpoint), found the way the drivers read them, so that no
``repr``, error, log line, banner or span shows them.

The drivers disagree on where a password ends, so a secret is whatever any of them would
take for one. libpq reads the userinfo up to the first ``@`` before the first ``/`` (``?``
and ``#`` do not end it); ``urllib`` (redis-py) and httpx end the address at ``/``, ``?`` or
``#`` and the userinfo at its last ``@``. Both percent-decode option names
(``?passw%6Frd=`` and ``?%70assword=`` set the password), and libpq also takes
``key=value`` strings. A URL that fits none of these readings is shown as a placeholder,
never raw. httpx and the SDKs log the URLs they are given: their loggers get a filter that
masks the secrets of the URLs handed to them.
"""

from __future__ import annotations

import base64
import logging
import re
from collections.abc import Mapping
from urllib.parse import unquote, unquote_plus, urlsplit, urlunsplit

__all__ = [
    "UNREADABLE_URL",
    "hide_in_logs",
    "redact_url",
    "userinfo_to_header",
    "without_url_secrets",
]

#: How a URL that does not parse is shown: any part of it could be the password.
UNREADABLE_URL = "<a URL that does not parse>"
_MASK = "***"
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://")
# One host (a name, an IPv4 or a bracketed IPv6 address) and an optional numeric port; libpq
# takes a comma-separated list of them. Anything else there (a port that is not a number:
# a password with a "/" in it) means the URL is not what it looks like.
_HOST = r"(?:\[[0-9A-Za-z:.%]*\]|[^\s:/?#@\[\],]*)(?::[0-9]*)?"
_HOSTS = re.compile(rf"{_HOST}(?:,{_HOST})*")
# An option whose decoded name, in letters and digits, holds one of these carries a secret
# (``password``, ``sslpassword``, ``passfile``, ``api-key``, ``access_token``, ``sig``...).
_SECRET_WORDS = ("pass", "pwd", "secret", "token", "key", "sig", "auth", "cred")
# Schemes where a user name without ``:password`` is only a name; elsewhere
# (``https://TOKEN@host``) it is how a token is passed.
_NAMED_USERS = ("postgresql", "postgres")
_LIBPQ_SPACE = " \t\n\r\f\v"  # C's isspace, which libpq's parser uses


class _Unreadable(ValueError):
    """The URL fits none of the drivers' readings."""


def redact_url(url: str) -> str:
    """``url`` as a person may see it: its password (in the userinfo, or an option whose
    decoded name says it is secret, in a URL or a libpq ``key=value`` string) as ``***``; a
    URL that does not parse is :data:`UNREADABLE_URL`."""
    return _redact(url)[0]


def without_url_secrets(text: str, url: str) -> str:
    """``text`` (a driver's words about ``url``) with every secret :func:`redact_url` hides
    masked, in the forms a driver may quote it (raw, decoded, or the pieces it split it
    into); none of it when ``url`` does not parse, as it could quote any part."""
    shown, hidden = _redact(url)
    if shown == UNREADABLE_URL:
        return "(not shown: it could quote the URL, which does not parse)"
    return _masked(text, _longest_first(_fragments(hidden)))


def hide_in_logs(url: str, *loggers: str) -> None:
    """From now on, mask ``url``'s secrets in what httpx and ``loggers`` (an SDK's, which
    quote the URLs they are given: a key in an MCP server's query) log."""
    shown, hidden = _redact(url)
    if not hidden:
        return
    secrets = [url] if shown == UNREADABLE_URL else _fragments(hidden)
    # A secret of one or two characters would mask every such text of every line. The set
    # is replaced, never changed in place: other threads may be logging through it.
    kept = {secret for secret in secrets if len(secret) >= 3}
    _LOG_FILTER.secrets = _longest_first(set(_LOG_FILTER.secrets) | kept)
    for name in ("httpx", "httpx2", *loggers):
        logger = logging.getLogger(name)
        if _LOG_FILTER not in logger.filters:
            logger.addFilter(_LOG_FILTER)


class _SecretsFilter(logging.Filter):
    """Masks the secrets :func:`hide_in_logs` was given in each record of the loggers it
    guards (the message as formatted: the URL is one of its arguments)."""

    def __init__(self) -> None:
        super().__init__()
        #: Longest first, so a secret inside a longer one is masked with it; sorted once per
        #: :func:`hide_in_logs`, not per record. It only grows, for the life of the process.
        self.secrets: tuple[str, ...] = ()

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a record that cannot format is the logger's business, not ours
            return True
        masked = _masked(message, self.secrets)
        if masked != message:
            record.msg, record.args = masked, ()
        return True


_LOG_FILTER = _SecretsFilter()


def _fragments(hidden: list[str]) -> set[str]:
    """The forms a driver may quote each hidden secret in: raw, decoded, and the pieces a
    password with an ``@`` in it is split into by libpq."""
    fragments = set()
    for secret in hidden:
        for form in (secret, unquote(secret), unquote_plus(secret)):
            fragments.add(form)
            fragments.update(p for p in re.split(r"[@:/?#&=,]", form) if len(p) >= 3)
    return {fragment for fragment in fragments if fragment}


def _longest_first(fragments: set[str]) -> tuple[str, ...]:
    return tuple(sorted(fragments, key=len, reverse=True))


def _masked(text: str, fragments: tuple[str, ...]) -> str:
    for fragment in fragments:
        text = text.replace(fragment, _MASK)
    return text


def userinfo_to_header(
    url: str, headers: Mapping[str, str] | None
) -> tuple[str, dict[str, str] | None]:
    """``url`` without its userinfo, and ``headers`` with the ``Authorization`` httpx would
    have made of it (Basic, taking precedence over any other, as httpx's does). Given to an
    SDK this way, the server sees the same request and the secret never reaches the SDK's
    log lines, ``repr`` or errors. A URL without userinfo comes back as it is."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url, dict(headers) if headers is not None else None
    userinfo, _, address = parts.netloc.rpartition("@")
    user, _, password = userinfo.partition(":")
    pair = f"{unquote(user)}:{unquote(password)}".encode()
    moved = {k: v for k, v in (headers or {}).items() if k.lower() != "authorization"}
    moved["Authorization"] = f"Basic {base64.b64encode(pair).decode('ascii')}"
    return urlunsplit(parts._replace(netloc=address)), moved


def _redact(url: str) -> tuple[str, list[str]]:
    """What :func:`redact_url` shows, and the raw secrets it hid."""
    try:
        if _SCHEME.match(url):
            return _redact_uri(url)
        if "=" in url:  # libpq's key=value form
            return _redact_conninfo(url)
        if "@" in url:  # userinfo without a scheme: no driver's URL
            raise _Unreadable(url)
        return url, []
    except ValueError:
        return UNREADABLE_URL, [url]


def _redact_uri(url: str) -> tuple[str, list[str]]:
    scheme, rest = url.split("://", 1)
    hidden: list[str] = []
    shown_user = ""
    # libpq's reading of the address runs to the first "/": the widest, so used for the
    # userinfo, which ends at the last "@" in it (urllib's and httpx's end).
    wide = rest.split("/", 1)[0]
    if "@" in wide:
        at = wide.rindex("@")
        userinfo, rest = rest[:at], rest[at + 1 :]
        user, colon, password = userinfo.partition(":")
        if colon:
            shown_user, hidden = f"{user}:{_MASK}@", [password]
        elif scheme.lower() in _NAMED_USERS:
            shown_user = f"{userinfo}@"
        else:
            shown_user, hidden = f"{_MASK}@", [userinfo]
    address, tail = _until(rest, "/?#")
    if not _HOSTS.fullmatch(address):
        raise _Unreadable(url)
    path, options = _until(tail, "?#")
    options, secrets = _redact_options(options)
    return f"{scheme}://{shown_user}{address}{path}{options}", hidden + secrets


def _until(text: str, stops: str) -> tuple[str, str]:
    """``text`` cut before the first of ``stops`` (the whole of it if none is there)."""
    end = min((i for i in (text.find(c) for c in stops) if i >= 0), default=len(text))
    return text[:end], text[end:]


def _redact_options(options: str) -> tuple[str, list[str]]:
    """The query (and fragment) with each secret option's value as ``***``. A value runs to
    the next ``&`` for libpq, so once one is hidden everything up to the next ``&`` is; an
    option without ``=`` is hidden too (no driver takes it for a setting)."""
    pieces = re.split(r"([?#&])", options)  # the delimiters at the odd indexes
    shown: list[str] = []
    hidden: list[str] = []
    hiding = False
    for index, piece in enumerate(pieces):
        if index % 2 or not piece:
            hiding = hiding and piece != "&"
            shown.append(piece)
            continue
        name, equals, value = piece.partition("=")
        if hiding or not equals:
            shown.append(_MASK)
            hidden.append(piece)
        elif _names_a_secret(name) or _holds_a_secret(value):
            shown.append(f"{name}={_MASK}")
            hidden.append(value)
        else:
            shown.append(piece)
            continue
        hiding = True
    return "".join(shown), hidden


def _redact_conninfo(text: str) -> tuple[str, list[str]]:
    """A libpq ``key=value`` string, read as libpq reads it, its secret values ``***``."""
    shown: list[str] = []
    hidden: list[str] = []
    pos = 0
    while (pos := _skip_space(text, pos)) < len(text):
        start = pos
        while pos < len(text) and text[pos] != "=" and text[pos] not in _LIBPQ_SPACE:
            pos += 1
        name = text[start:pos]
        pos = _skip_space(text, pos)
        if pos == len(text) or text[pos] != "=":
            raise _Unreadable(text)
        start = pos = _skip_space(text, pos + 1)
        value, pos = _conninfo_value(text, pos)
        if _names_a_secret(name) or _holds_a_secret(value):
            shown.append(f"{name}={_MASK}")
            hidden += [text[start:pos], value]
        else:
            shown.append(f"{name}={text[start:pos]}")
    return " ".join(shown), hidden


def _skip_space(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in _LIBPQ_SPACE:
        pos += 1
    return pos


def _conninfo_value(text: str, pos: int) -> tuple[str, int]:
    """The value at ``pos`` and where it ends: up to a space, or between single quotes; a
    backslash takes the next character as it is."""
    quoted = text.startswith("'", pos)
    pos += quoted
    chars: list[str] = []
    while pos < len(text):
        char = text[pos]
        if char == "\\" and pos + 1 < len(text):
            chars.append(text[pos + 1])
            pos += 2
            continue
        if quoted and char == "'":
            return "".join(chars), pos + 1
        if not quoted and char in _LIBPQ_SPACE:
            break
        chars.append(char)
        pos += 1
    if quoted:
        raise _Unreadable(text)  # libpq: an unterminated quoted string
    return "".join(chars), pos


def _names_a_secret(name: str) -> bool:
    """Whether an option's name, decoded as often as a driver might, says it is secret."""
    for _ in range(8):
        decoded = unquote_plus(name)
        if decoded == name:
            break
        name = decoded
    letters = re.sub(r"[^a-z0-9]", "", name.lower())
    return any(word in letters for word in _SECRET_WORDS)


def _holds_a_secret(value: str) -> bool:
    """Whether a value of a harmless option is itself a URL or a connection string with a
    secret (libpq's ``dbname`` may be one)."""
    decoded = unquote_plus(value)
    return bool(decoded) and _redact(decoded)[0] != decoded
