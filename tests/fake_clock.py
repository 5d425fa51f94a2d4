"""A clock for tests: epoch seconds that move only when the test moves them. Stores take it
as ``clock=``; the consent engine (and the server's issuer, checks and claims through it)
reads ``agui_chat.consent._rules.clock``, which ``on_the_server`` replaces."""

from __future__ import annotations

import pytest

#: Far from the real time, so a check that reads the real clock instead shows.
START = 1_900_000_000.0


class FakeClock:
    """Epoch seconds that move only when the test says so."""

    def __init__(self, now: float = START) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def on_the_server(monkeypatch: pytest.MonkeyPatch, now: float = START) -> FakeClock:
    """One fake clock for issuing interrupts and checking resumes (pass it to the store too)."""
    from agui_chat.consent import _rules

    fake = FakeClock(now)
    monkeypatch.setattr(_rules, "clock", fake)
    return fake
