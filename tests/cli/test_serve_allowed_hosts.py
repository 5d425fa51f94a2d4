"""``agui-chat serve`` as a real process and the Host names it answers (issue 25): ``--ui``
on loopback answers the loopback names only, so a DNS-rebinding request (``Host:
evil.example``) gets 403 on the page and on the endpoint; a ``--host`` other than loopback
is refused unless ``--allowed-host`` says under which names the server is reached."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx
from test_serve_command import run_input, serving


def test_serve_ui_refuses_a_rebound_host_on_the_page_and_the_endpoint(tmp_path: Path) -> None:
    with serving(tmp_path, "--ui") as (url, _):
        evil = {"host": "evil.example", "origin": "http://evil.example"}
        page = httpx.get(url + "/", headers=evil, timeout=30)
        assert page.status_code == 403
        assert "--allowed-host" in page.text
        run = httpx.post(url + "/", json=run_input("delete it"), headers=evil, timeout=30)
        assert run.status_code == 403
        assert httpx.get(url + "/", timeout=30).status_code == 200  # its own name: the page
        local = {"host": url.removeprefix("http://").replace("127.0.0.1", "localhost")}
        assert httpx.get(url + "/", headers=local, timeout=30).status_code == 200


def test_serve_on_all_interfaces_needs_the_names_it_is_reached_under(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    out = subprocess.run(
        [sys.executable, "-m", "agui_chat", "serve", "--host", "0.0.0.0", "--port", "0"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 1
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "--allowed-host NAME" in lines[0], out.stderr


def test_serve_answers_the_names_given_with_allowed_host(tmp_path: Path) -> None:
    args = ("--host", "0.0.0.0", "--allowed-host", "agent.test")
    with serving(tmp_path, *args) as (url, _):
        body = run_input("hello")
        named = httpx.post(url + "/", json=body, headers={"host": "agent.test:1"}, timeout=30)
        assert named.status_code == 200
        # The list replaces the default: under a name not given, even loopback, 403.
        assert httpx.post(url + "/", json=body, timeout=30).status_code == 403


def test_help_names_allowed_host() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "agui_chat", "serve", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert "--allowed-host NAME" in out.stdout and "DNS rebinding" in out.stdout
