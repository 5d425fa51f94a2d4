"""(d) and (b) counted in CPU instructions instead of seconds: deterministic, immune to load.

    python bench/instructions.py            # runs valgrind (callgrind) itself, prints the ratios
    python bench/instructions.py bare 2000  # one workload alone (what valgrind runs)

Each mode runs under callgrind at two sizes; the difference of the instruction counts divided
by the difference of sizes is the cost of one update (or event), without start-up costs. The
ratio pipeline/bare is (d)'s figure in instructions, (d'); mixed-ours/mixed-floor is (b)'s,
(b'): bench/run.py's mixed stream read by ``AGUIChatClient`` against httpx-sse + json.loads
(see bench/README.md). Hash randomisation is pinned so that two runs count the same.
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

SIZES = {"bare": (2_000, 12_000), "pipeline": (2_000, 12_000)}
SIZES |= {"mixed-ours": (4_000, 16_000), "mixed-floor": (4_000, 16_000)}
MODES = tuple(SIZES)


@ai_function
def lookup(query: str) -> str:
    """A tool the model could call (it does not, here)."""
    return query


async def drain(mode: str, n: int) -> None:
    if mode.startswith("mixed"):
        import run  # bench/run.py, beside this script

        http = run.asgi_client(run.sse_app(run.mixed_stream(n)))
        await (run.ours_read(http) if mode == "mixed-ours" else run.floor_read(http))
        return
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
    jobs = [(mode, n) for mode in MODES for n in SIZES[mode]]
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        counts = dict(zip(jobs, pool.map(lambda job: count(*job), jobs), strict=True))
    per = {
        mode: (counts[mode, high] - counts[mode, low]) / (high - low)
        for mode, (low, high) in SIZES.items()
    }
    print(
        f"(d') instructions per update: pipeline {per['pipeline']:,.0f}, "
        f"bare {per['bare']:,.0f}, ratio {per['pipeline'] / per['bare']:.3f}x"
    )
    print(
        f"(b') instructions per event of the mixed stream: ours {per['mixed-ours']:,.0f}, "
        f"floor {per['mixed-floor']:,.0f}, ratio {per['mixed-ours'] / per['mixed-floor']:.3f}x"
    )


if __name__ == "__main__":
    if len(sys.argv) == 1:
        main()
    elif len(sys.argv) == 3 and sys.argv[1] in MODES:
        asyncio.run(drain(sys.argv[1], int(sys.argv[2])))
    else:
        sys.exit("usage: instructions.py [bare|pipeline N]")
