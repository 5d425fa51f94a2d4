"""Fixtures for the OpenAI adapter tests: a respx router standing in for the API, an SDK
client that sends through it, and the chat client under test."""

from __future__ import annotations

import hashlib
import socket
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import openai
import pytest
import respx
from openai_wire import BASE_URL, Wire, legacy_http_client

from agui_chat.openai import OpenAIChatClient
from real_components import CACHE, require, require_path


@pytest.fixture
def router() -> Iterator[respx.MockRouter]:
    # Every request goes to the router: anything unmatched fails instead of reaching a network.
    with respx.mock(base_url=BASE_URL, assert_all_called=False) as mock:
        yield mock


@pytest.fixture
def wire(router: respx.MockRouter) -> Wire:
    return Wire(router)


@pytest.fixture
async def sdk() -> AsyncIterator[openai.AsyncOpenAI]:
    client = openai.AsyncOpenAI(
        api_key="sk-test", base_url=BASE_URL, http_client=legacy_http_client(), max_retries=0
    )
    yield client
    await client.close()


@pytest.fixture
def chat(sdk: openai.AsyncOpenAI) -> OpenAIChatClient:
    return OpenAIChatClient("gpt-4o-mini", client=sdk)


# -- the aimock lane: a real OpenAI-compatible server (mk/aimock.mk installs it) -----------------
AIMOCK_PIN = Path(__file__).parent / "aimock" / "package.json"
AIMOCK_FIXTURES = Path(__file__).parent / "aimock" / "fixtures"


def _aimock_cli() -> Path:
    digest = hashlib.sha256(AIMOCK_PIN.read_bytes()).hexdigest()[:12]
    install = CACHE / "npm" / f"aimock-{digest}"
    return (
        require_path(
            install / ".installed",
            "@copilotkit/aimock",
            f"run `make test-deps` (npm installs it into {install})",
        ).parent
        / "node_modules"
        / "@copilotkit"
        / "aimock"
        / "dist"
        / "cli.js"
    )


@pytest.fixture(scope="session")
def aimock() -> Iterator[str]:
    """A running aimock on 127.0.0.1 serving tests/openai/aimock/fixtures; its /v1 base URL."""
    node = require("node", "install Node.js 20 or later (mk/aimock.mk does, as root)")
    cli = _aimock_cli()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [
            node,
            str(cli),
            "-h",
            "127.0.0.1",
            "-p",
            str(port),
            "-f",
            str(AIMOCK_FIXTURES),
            "-c",
            "8",
            "--log-level",
            "warn",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(200):
            if process.poll() is not None:
                raise RuntimeError(f"aimock exited: {process.stderr.read().decode()}")  # type: ignore[union-attr]
            try:
                if httpx.get(f"{base}/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.05)
        else:
            raise RuntimeError("aimock did not start within 10 seconds")
        yield f"{base}/v1"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
