"""samples/trace_demo.py runs the demo over real HTTP and prints its trace as a tree: every
client run holds its server run, which holds the model calls and tool executions; the
person's events sit on the runs; each resumed run links to the run that paused."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "trace_demo.py"


def test_the_sample_prints_the_demos_trace_as_a_tree() -> None:
    out = subprocess.run(
        [sys.executable, str(SAMPLE), "--console"],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert out.returncode == 0, out.stderr
    assert "assistant> Done: deleted reports/q3-draft.txt." in out.stdout
    assert "assistant> Done: deployed web build 42." in out.stdout
    tree = out.stdout.split("\n\n", 1)[1].splitlines()
    assert tree[0] == "demo conversation [INTERNAL]"
    shape = [re.sub(r"  (agui|gen_ai|error)\S*=.*$", "", line) for line in tree[1:]]
    shape = [re.sub(r" (gen_ai|agui_chat)\.\S+=\S+", "", line) for line in shape]
    shape = [re.sub(r"run_[0-9a-f]{32}", "RUN", line) for line in shape]
    assert shape == [
        "  agui.run [CLIENT]",
        "    agui.run [SERVER]",
        "      · agui_chat.approval.requested",
        "      chat agui-chat-demo [CLIENT]",
        "  agui.run [CLIENT]",
        "    agui.run [SERVER]",
        "      · agui_chat.approval.approved",
        "      ↪ links to the paused run agui.run RUN",
        "      execute_tool delete_file [INTERNAL]",
        "        · agui_chat.audit.approved",
        "      chat agui-chat-demo [CLIENT]",
        "  agui.run [CLIENT]",
        "    agui.run [SERVER]",
        "      · agui_chat.input.requested",
        "      chat agui-chat-demo [CLIENT]",
        "      execute_tool deploy [INTERNAL]",
        "  agui.run [CLIENT]",
        "    agui.run [SERVER]",
        "      · agui_chat.input.answered",
        "      ↪ links to the paused run agui.run RUN",
        "      execute_tool deploy [INTERNAL]",
        "        · agui_chat.audit.answered",
        "      chat agui-chat-demo [CLIENT]",
    ]
    runs = re.findall(r"agui\.run \[SERVER\]  agui\.run\.id=(run_[0-9a-f]{32})", out.stdout)
    links = re.findall(r"links to the paused run agui\.run (run_[0-9a-f]{32})", out.stdout)
    assert links == [runs[0], runs[2]]  # each resumed run links to the run that paused
    assert out.stderr.count('"name": "agui.run"') == 8  # --console exported every run span
