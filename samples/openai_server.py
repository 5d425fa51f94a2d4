"""An OpenAI-backed AG-UI server with an approval-gated tool.

Needs ``OPENAI_API_KEY`` for OpenAI, or ``OPENAI_BASE_URL`` alone for a local
OpenAI-compatible server such as Ollama or vLLM (no key needed); with neither it says so and
exits cleanly. Then talk to it with ``agui-chat chat http://127.0.0.1:8000/``.

    pip install 'agui-chat[openai,server]'
    OPENAI_API_KEY=... python samples/openai_server.py --model gpt-4o-mini
    OPENAI_BASE_URL=http://127.0.0.1:11434/v1 python samples/openai_server.py --model llama3.2
"""

from __future__ import annotations

import argparse
import os
import sys

from agui_chat import approval_required


@approval_required
def delete_file(path: str) -> str:
    """Delete a file from the workspace.

    Args:
        path: The file to delete.
    """
    return f"deleted {path}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="gpt-4o-mini")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args()
    if not os.environ.get("OPENAI_API_KEY") and not os.environ.get("OPENAI_BASE_URL"):
        print(
            "openai_server: set OPENAI_API_KEY (for OpenAI) or OPENAI_BASE_URL (for a local "
            "OpenAI-compatible server) to run this sample."
        )
        return 0
    from agui_chat.agui import AGUIServer, serve
    from agui_chat.openai import OpenAIChatClient

    app = AGUIServer(OpenAIChatClient(args.model), tools=[delete_file])
    serve(app, host="127.0.0.1", port=args.port)
    return 0


if __name__ == "__main__":
    sys.exit(main())
