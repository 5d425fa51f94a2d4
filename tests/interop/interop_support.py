"""Helpers of the real-peer lane: where ``mk/interop.mk`` installed each peer (its own
virtualenv, or npm folder, in the cache, keyed by the hash of its pins), a peer server
process on a free port of 127.0.0.1 and the file its tools record their runs in, and
running a peer client to its end. A peer that is not installed skips its tests with the way
to install it, and fails them under CI."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

from agui_chat import ChatMessage, ChatOptions, FunctionCallContent, FunctionResultContent
from agui_chat.agui import AGUIServer
from agui_chat.testing import ScriptedChatClient
from agui_server import agui_server
from agui_streams import SideEffects
from real_components import CACHE, missing

HERE = Path(__file__).parent
PINS = HERE / "peers"
NPM = HERE / "npm"
INSTALL = "run `make test-deps` (mk/interop.mk installs the peers into the cache)"
#: How long a peer server may take to start listening (LangGraph imports are slow).
START_SECONDS = 90.0


def peer_dir(name: str) -> Path:
    """Where ``make`` installs peer ``name`` (its pins file hashed, as mk/interop.mk does)."""
    digest = hashlib.sha256((PINS / f"{name}.txt").read_bytes()).hexdigest()[:12]
    return CACHE / "peers" / f"{name}-{digest}"


def peer_python(name: str) -> Path:
    """The Python of peer ``name``'s virtualenv, or skip/fail naming how to install it."""
    home = peer_dir(name)
    if not (home / ".installed").exists():
        missing(f"the {name} peer ({PINS / (name + '.txt')}) in {home}", INSTALL)
    return home / "bin" / "python"


def ts_client_modules() -> Path:
    """The ``node_modules`` holding the pinned ``@ag-ui/client``, or skip/fail."""
    digest = hashlib.sha256(
        (NPM / "package.json").read_bytes() + (NPM / "package-lock.json").read_bytes()
    ).hexdigest()[:12]
    home = CACHE / "peers" / f"ts-client-{digest}"
    if not (home / ".installed").exists():
        missing(f"@ag-ui/client ({NPM / 'package.json'}) in {home}", INSTALL)
    return home / "node_modules"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class PeerServer:
    """A peer's server process on 127.0.0.1 and the file its tools record runs in."""

    def __init__(self, name: str, script: str, tmp: Path) -> None:
        self.port = free_port()
        self.effects = tmp / f"{name}-effects.jsonl"
        self.effects.touch()
        self.log = tmp / f"{name}.log"
        python = peer_python(name)
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(
                [str(python), str(HERE / "servers" / script), str(self.port), str(self.effects)],
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=tmp,
            )
        self._wait()

    def url(self, path: str = "/") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def _wait(self) -> None:
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"the peer server exited: {self.log.read_text()[-3000:]}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise AssertionError(f"the peer server did not listen in time: {self.log.read_text()}")

    def runs(self, tool: str, **arguments: Any) -> int:
        """How often ``tool`` ran with (at least) these arguments."""
        lines = [json.loads(x) for x in self.effects.read_text().splitlines() if x.strip()]
        return sum(
            1
            for line in lines
            if line.get("tool") == tool and all(line.get(k) == v for k, v in arguments.items())
        )

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)


async def run_peer(command: list[str], env: dict[str, str] | None = None) -> dict[str, Any]:
    """Run a peer client to its end (bounded) and return the JSON object it prints last."""
    process = await asyncio.create_subprocess_exec(
        *command,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, **(env or {})},
    )
    try:
        out, err = await asyncio.wait_for(process.communicate(), timeout=120)
    except asyncio.TimeoutError:
        process.kill()
        await process.wait()
        raise
    lines = [x for x in out.decode().splitlines() if x.startswith("{")]
    assert process.returncode == 0 and lines, (out.decode(), err.decode()[-3000:])
    result: dict[str, Any] = json.loads(lines[-1])
    return result


def our_app(effects: SideEffects) -> AGUIServer:
    """Our server over a scripted model: it deletes the ``*.txt`` the user names (a gated
    ``delete_file``, counted in ``effects``), repeats the tool results it gets, and otherwise
    says hello."""

    def reply(messages: list[ChatMessage], options: ChatOptions | None) -> Any:
        last = messages[-1]
        results = [c.result for c in last.contents if isinstance(c, FunctionResultContent)]
        if results:
            return "Tool said: " + "; ".join(str(r) for r in results)
        paths = re.findall(r"[\w./-]+\.txt", last.text)
        if paths:
            return [
                FunctionCallContent(f"call_del_{i + 1}", "delete_file", {"path": p})
                for i, p in enumerate(paths)
            ]
        return "Hello from agui_chat."

    return agui_server(ScriptedChatClient(reply), tools=[effects.delete_file()]).app
