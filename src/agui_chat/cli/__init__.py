"""The ``agui-chat`` command: ``demo``, ``serve`` and ``chat``."""

from ._main import main

__all__ = ["main"]
