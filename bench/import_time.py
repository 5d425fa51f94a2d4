"""How long ``import agui_chat`` takes, next to ``import httpx`` (its floor: the one network
dependency every user of the package imports anyway), measured side by side.

Each pair runs ``python -X importtime -c "import agui_chat"`` and the same for httpx in fresh
processes, alternating (so a change of load on the machine hits both alike); it prints the
median and the minimum of each over the pairs, the median of the per-pair ratios, whether the
heavy optional imports stay out of ``import agui_chat``, and our slowest modules.

    .venv/bin/python bench/import_time.py [--pairs N]

Budgets: ``import agui_chat`` costs about what ``import httpx`` costs (issue 14);
``import agui_chat.agui`` at most 150 ms and ``import agui_chat.mcp`` at most the ``mcp`` SDK's
own import + 50 ms (issue 29), both measured in the same alternating rounds.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys

#: Modules ``import agui_chat`` must not pull in (each is imported on its first use).
DEFERRED = (
    "jsonschema", "pydantic", "pydantic_core", "tenacity", "httpx", "starlette", "uvicorn", "openai"
)  # fmt: skip
_LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|(\s*)(\S+)")


def import_time(module: str) -> tuple[float, dict[str, int]]:
    """Seconds for ``import module`` in a fresh interpreter (every top-level import it made,
    its parent packages and the interpreter's own start-up imports left out), and each
    imported module's cumulative microseconds."""
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", f"import {module}"],
        capture_output=True,
        text=True,
        check=True,
    )
    cumulative: dict[str, int] = {}
    total = 0
    started = False  # a top-level import that is not the interpreter's start-up (site, ...)
    for line in out.stderr.splitlines():
        found = _LINE.match(line)
        if found:
            name = found.group(4)
            cumulative[name] = int(found.group(2))
            if found.group(3) == " " and name.split(".")[0] not in sys.stdlib_module_names:
                started = True
                total += int(found.group(2))
    assert started, out.stderr[-500:]
    return total / 1e6, cumulative


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--pairs", type=int, default=9)
    args = parser.parse_args()
    ours: list[float] = []
    floor: list[float] = []
    agui: list[float] = []
    mcp_over: list[float] = []
    modules: dict[str, int] = {}
    for module in ("agui_chat", "agui_chat.agui", "agui_chat.mcp"):  # warm the bytecode caches
        import_time(module)
    for _ in range(args.pairs):
        seconds, modules = import_time("agui_chat")
        ours.append(seconds)
        floor.append(import_time("httpx")[0])
        agui.append(import_time("agui_chat.agui")[0])
        mcp_over.append(import_time("agui_chat.mcp")[0] - import_time("mcp")[0])
    ratios = [a / b for a, b in zip(ours, floor, strict=True)]
    print(
        f"import agui_chat: median {statistics.median(ours) * 1e3:.1f} ms, "
        f"min {min(ours) * 1e3:.1f} ms (budget 150 ms)"
    )
    print(
        f"import httpx:     median {statistics.median(floor) * 1e3:.1f} ms, "
        f"min {min(floor) * 1e3:.1f} ms"
    )
    print(
        f"ratio agui_chat / httpx: {statistics.median(ratios):.2f}x (median of {args.pairs} pairs)"
    )
    print(
        f"import agui_chat.agui: median {statistics.median(agui) * 1e3:.1f} ms, "
        f"min {min(agui) * 1e3:.1f} ms (budget 150 ms)"
    )
    print(
        f"import agui_chat.mcp over import mcp: median {statistics.median(mcp_over) * 1e3:.1f} ms "
        f"(per-round differences; budget 50 ms)"
    )
    pulled = [name for name in DEFERRED if name in modules]
    print(
        "deferred until first use: "
        + ", ".join(DEFERRED)
        + (f"; BUT imported: {', '.join(pulled)}" if pulled else " (none imported)")
    )
    ours_only = sorted(
        ((us, name) for name, us in modules.items() if name.startswith("agui_chat.")),
        reverse=True,
    )[:5]
    print(
        "slowest of ours (cumulative): "
        + ", ".join(f"{name} {us / 1e3:.1f} ms" for us, name in ours_only)
    )


if __name__ == "__main__":
    main()
