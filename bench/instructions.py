"""(d) counted in CPU instructions instead of seconds: deterministic, immune to machine load.

    valgrind --tool=callgrind --callgrind-out-file=/dev/null \
        python bench/instructions.py bare 2000
    (and the same with pipeline instead of bare)

Run each mode at two sizes (say 2,000 and 12,000 updates); the difference of the "Collected"
counts divided by the difference of sizes is the cost of one update, without start-up costs.
The ratio pipeline/bare is (d)'s figure in instructions (see bench/README.md).
"""

from __future__ import annotations

import asyncio
import sys

from agui_chat import ChatClientBuilder, ChatOptions, ai_function
from agui_chat.testing import ScriptedChatClient


@ai_function
def lookup(query: str) -> str:
    """A tool the model could call (it does not, here)."""
    return query


async def drain(mode: str, n: int) -> None:
    reply = " ".join(f"tok{i}" for i in range(n))
    bare = ScriptedChatClient(lambda messages, options: reply)
    client = (
        bare
        if mode == "bare"
        else ChatClientBuilder(bare).use_logging().use_function_invocation().use_retry().build()
    )
    async for _update in client.get_streaming_response("go", ChatOptions(tools=[lookup])):
        pass


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("bare", "pipeline"):
        sys.exit("usage: instructions.py bare|pipeline N")
    asyncio.run(drain(sys.argv[1], int(sys.argv[2])))
