"""(d) counted in CPU instructions instead of seconds: deterministic, immune to machine load.

    python bench/instructions.py            # runs valgrind (callgrind) itself, prints the ratio
    python bench/instructions.py bare 2000  # one workload alone (what valgrind runs)

Each mode runs under callgrind at two sizes; the difference of the instruction counts divided
by the difference of sizes is the cost of one update, without start-up costs. The ratio
pipeline/bare is (d)'s figure in instructions (see bench/README.md). Hash randomisation is
pinned so that two runs count the same.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

from agui_chat import ChatClientBuilder, ChatOptions, ai_function
from agui_chat.testing import ScriptedChatClient

SIZES = (2_000, 12_000)
MODES = ("bare", "pipeline")


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


def count(mode: str, n: int) -> int:
    """Instructions callgrind counts for one whole run of ``drain(mode, n)``."""
    done = subprocess.run(
        [
            "valgrind",
            "--tool=callgrind",
            "--callgrind-out-file=/dev/null",
            sys.executable,
            __file__,
            mode,
            str(n),
        ],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONHASHSEED": "0"},
    )
    found = re.search(r"Collected : (\d+)", done.stderr)
    if found is None:
        raise RuntimeError(f"no instruction count in valgrind's output:\n{done.stderr}")
    return int(found.group(1))


def main() -> None:
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is not installed (apt install valgrind)")
    jobs = [(mode, n) for mode in MODES for n in SIZES]
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        counts = dict(zip(jobs, pool.map(lambda job: count(*job), jobs), strict=True))
    per_update = {
        mode: (counts[mode, SIZES[1]] - counts[mode, SIZES[0]]) / (SIZES[1] - SIZES[0])
        for mode in MODES
    }
    print(
        f"(d') instructions per update: pipeline {per_update['pipeline']:,.0f}, "
        f"bare {per_update['bare']:,.0f}, ratio {per_update['pipeline'] / per_update['bare']:.3f}x"
    )


if __name__ == "__main__":
    if len(sys.argv) == 1:
        main()
    elif len(sys.argv) == 3 and sys.argv[1] in MODES:
        asyncio.run(drain(sys.argv[1], int(sys.argv[2])))
    else:
        sys.exit("usage: instructions.py [bare|pipeline N]")
