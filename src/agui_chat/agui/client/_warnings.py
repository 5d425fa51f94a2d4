"""How the AG-UI client warns: to the ``agui_chat.agui`` logger and to the caller's
``on_warning``."""

from __future__ import annotations

import logging
from collections.abc import Callable

logger = logging.getLogger("agui_chat.agui")


def warn(on_warning: Callable[[str], None] | None, message: str) -> None:
    """Log a warning to the ``agui_chat.agui`` logger and give it to ``on_warning``."""
    logger.warning("%s", message)
    if on_warning is not None:
        on_warning(message)
