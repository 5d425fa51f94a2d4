"""``needs_extra``: how an adapter imports the optional dependency of its extra, failing with
the ``pip install`` line that adds it when it is not installed."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator


@contextlib.contextmanager
def needs_extra(
    extra: str, *, by: str, module: str | None = None, package: str | None = None
) -> Iterator[None]:
    """Run the imports in the ``with`` block; one that fails for want of ``module`` (default:
    the extra's name) or a part of it raises ``ImportError("<by> needs <package>: pip install
    'agui-chat[<extra>]'")`` from the original error (``package`` defaults to "the
    '<module>' package"). Any other import error goes through unchanged."""
    wanted = module or extra
    try:
        yield
    except ImportError as exc:
        if exc.name is None or not (exc.name == wanted or exc.name.startswith(f"{wanted}.")):
            raise
        what = package or f"the {wanted!r} package"
        raise ImportError(f"{by} needs {what}: pip install 'agui-chat[{extra}]'") from exc
