"""``agui-chat demo --model NAME`` talks to an OpenAI-compatible server through
``OpenAIChatClient`` (here a fake one on 127.0.0.1 found through ``OPENAI_BASE_URL``) and
completes the same approval + question round trip, saying which model it uses; when the
round trip does not complete, it exits non-zero."""

from __future__ import annotations

import os
import subprocess
import sys

from fake_openai import FakeOpenAI


def demo_on(fake: FakeOpenAI) -> subprocess.CompletedProcess[str]:
    with fake.serving() as base_url:
        env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
        env.update(OPENAI_BASE_URL=base_url, OPENAI_API_KEY="sk-test")
        return subprocess.run(
            [sys.executable, "-m", "agui_chat", "demo", "--model", "fake-model", "--yes"],
            capture_output=True,
            text=True,
            timeout=90,
            env=env,
        )


def test_demo_with_a_model_runs_the_round_trip_on_that_model() -> None:
    fake = FakeOpenAI()
    out = demo_on(fake)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "the OpenAI model 'fake-model'" in out.stdout
    assert "offline demo model" not in out.stdout
    assert "deleted reports/q3-draft.txt" in out.stdout
    assert "deployed web build 42" in out.stdout
    assert "Round trip complete" in out.stdout
    assert {r["model"] for r in fake.requests} == {"fake-model"}
    offered = {t["function"]["name"] for t in fake.requests[0]["tools"]}
    assert offered == {"delete_file", "deploy"}
    tool_results = [
        m["content"] for r in fake.requests for m in r["messages"] if m["role"] == "tool"
    ]
    assert "deleted reports/q3-draft.txt" in tool_results


def test_demo_exits_non_zero_when_the_round_trip_does_not_complete() -> None:
    fake = FakeOpenAI(lazy=True)
    out = demo_on(fake)
    assert out.returncode == 1
    assert "The round trip did not complete." in out.stdout
    assert "Round trip complete" not in out.stdout
    assert len(fake.requests) == 2  # one per demo prompt; nothing paused, nothing ran
