"""``agui-chat chat``: the read–send–answer loop, with Ctrl-C and errors like a shell.

At ``you>`` a Ctrl-C abandons the line and a second one in a row quits (status 130); Ctrl-D
or an empty line quits. ``/grants`` lists the approvals this conversation remembers and
``/revoke <id>`` ends one (:mod:`._chat_grants`); they are not sent to the agent. Ctrl-C
while a reply streams cancels that turn only. A failed turn prints one line saying what to
do, and is dropped from the history so it can be asked again; the exit status is 1 when the
last turn failed.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

from .._client import ChatClient
from .._exceptions import AGUIChatError
from .._messages import ChatMessage
from ._chat_grants import ServerGrants, is_grants_command
from ._conversation import Transcript, take_turn
from ._errors import address, explain
from ._input import Interrupted
from ._prompts import Terminal, one_line

__all__ = ["is_loopback", "run_chat"]

#: The exit status when the person quits with Ctrl-C (as a shell reports SIGINT).
CTRL_C_STATUS = 130


def is_loopback(url: str) -> bool:
    """Whether ``url`` names this machine (``localhost`` or a loopback address)."""
    host = urlsplit(url).hostname or ""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


async def run_chat(
    client: ChatClient, url: str, term: Terminal, grants: ServerGrants | None = None
) -> int:
    """Hold the conversation until the person quits; returns the exit status. ``grants``:
    where ``/grants`` and ``/revoke`` go (without it they are sent as they are)."""
    history: list[ChatMessage] = []
    transcript = Transcript()
    last_failed = False
    interrupted = False
    where = address(url)
    with term.ctrl_c:
        while True:
            try:
                line = await term.read("\nyou> ")
            except Interrupted:
                # The terminal itself echoed the ^C: say what it did, not ^C again.
                if interrupted:
                    term.say()
                    return CTRL_C_STATUS
                interrupted = True
                term.say("  (press Ctrl-C again, or Ctrl-D, to quit)")
                continue
            interrupted = False
            if not line:  # end of input, or an empty line
                term.say()
                return 1 if last_failed else 0
            if grants is not None and is_grants_command(line):
                try:
                    await term.ctrl_c.run(grants.run(line, term))
                except Interrupted:
                    term.say("  cancelled (Ctrl-C)")
                continue
            kept = len(history)
            try:
                await take_turn(client, history, line, term, transcript, echo=False, address=where)
                last_failed = False
            except Interrupted:
                del history[kept:]
                term.say("  turn cancelled (Ctrl-C); the conversation goes on")
            except AGUIChatError as exc:
                del history[kept:]
                term.say(f"  error: {one_line(explain(exc, url))}")
                last_failed = True
