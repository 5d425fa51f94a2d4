"""Opening the approval store a server keeps, for ``agui-chat audit`` and ``agui-chat grants``.

A store is outside input and its URL may hold a password: the URL is only ever shown
redacted (:func:`agui_chat._url_secrets.redact_url`), and every failure is one line naming
the store that way, with whatever the driver said about it masked too. Two URLs that would
read nothing are refused before anything is opened: ``memory://`` (each process has its own,
so it is always empty here) and a SQLite file that does not exist (opening it would make an
empty one, and say nothing of the mistyped path).
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import pathlib
import sqlite3
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from urllib.parse import unquote, urlsplit

from .._exceptions import ApprovalStoreError, ConfigurationError
from .._url_secrets import redact_url, without_url_secrets
from ..stores import ApprovalStore, store_from_url
from ._errors import CommandError

__all__ = ["StoreFailure", "add_store_argument", "opened_store", "shown_store"]

#: Loggers of the store drivers that log each failed attempt to connect, several lines a
#: time: a one-shot command reports the failure itself, once.
_CHATTY_LOGGERS = ("psycopg.pool",)
#: The table every SQLite approval store has from its first use.
_SQLITE_TABLE = "agui_chat_approvals"


class StoreFailure(CommandError):
    """The store could not be opened or read: one line naming it, its password hidden."""


def add_store_argument(parser: argparse.ArgumentParser) -> None:
    """The required ``--store URL`` option of ``audit`` and ``grants``."""
    parser.add_argument(
        "--store",
        required=True,
        metavar="URL",
        help="the server's store: sqlite:///file.db, redis://host:6379/0 or "
        "postgresql://user:password@host:5432/dbname (its password is never printed)",
    )


def shown_store(url: str) -> str:
    """The store's URL as a person may see it (its password ``***``)."""
    return redact_url(url)


def _refuse_empty_stores(url: str, shown: str) -> None:
    """``memory://`` and a missing SQLite file read as an empty trail: say so instead."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return  # store_from_url names it
    scheme = parts.scheme.lower()
    if scheme == "memory":
        raise StoreFailure(
            "--store memory:// is this command's own store, always empty: name the store the "
            "server keeps (sqlite:///file.db, redis://host:6379/0 or postgresql://...)"
        )
    if scheme == "sqlite" and not parts.netloc and len(parts.path) > 1:
        _check_sqlite_file(os.path.abspath(unquote(parts.path[1:])), shown)


def _check_sqlite_file(path: str, shown: str) -> None:
    """A SQLite file that is not an approval store is left alone: opening it as one would add
    the store's tables to it."""
    if not os.path.exists(path):
        raise StoreFailure(
            f"--store {shown}: no SQLite file at {path} (nothing was created); is that "
            "the file the server keeps?"
        )
    try:
        with contextlib.closing(
            sqlite3.connect(f"{pathlib.Path(path).as_uri()}?mode=ro", uri=True)
        ) as db:
            names = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
    except sqlite3.Error as exc:
        raise StoreFailure(f"--store {shown}: cannot read {path}: {exc}") from None
    if _SQLITE_TABLE not in names:
        raise StoreFailure(
            f"--store {shown}: {path} is not an approval store (it has no {_SQLITE_TABLE} "
            "table); nothing was changed"
        )


@contextmanager
def _quiet_drivers() -> Iterator[None]:
    loggers = [logging.getLogger(name) for name in _CHATTY_LOGGERS]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)


def _failure(exc: BaseException, url: str, shown: str) -> StoreFailure:
    """One line for a store that failed, naming it (and never its password)."""
    text = without_url_secrets(str(exc), url)
    if shown not in text:
        text = f"the approval store {shown}: {text}"
    return StoreFailure(text)


@asynccontextmanager
async def opened_store(url: str) -> AsyncIterator[ApprovalStore]:
    """The store ``url`` names, closed at the end; every failure of opening or reading it
    (inside the ``with`` too) becomes one :class:`StoreFailure` line."""
    shown = shown_store(url)
    _refuse_empty_stores(url, shown)
    with _quiet_drivers():
        try:
            store = store_from_url(url)
        except ConfigurationError as exc:
            raise StoreFailure(f"--store: {without_url_secrets(str(exc), url)}") from None
        except ImportError as exc:  # an extra that is not installed: its pip line
            raise StoreFailure(f"--store {shown}: {exc}") from None
        try:
            if not store.keeps_governance:
                raise StoreFailure(f"the approval store {shown} keeps no audit trail or grants")
            yield store
        except ApprovalStoreError as exc:
            raise _failure(exc, url, shown) from None
        finally:
            # What was read is read; the failure that matters was reported.
            with contextlib.suppress(ApprovalStoreError, OSError):
                await store.aclose()
