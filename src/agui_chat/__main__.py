"""``python -m agui_chat``: the ``agui-chat`` command."""

from .cli import main

raise SystemExit(main())
