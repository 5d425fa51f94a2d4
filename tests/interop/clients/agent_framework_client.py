"""Microsoft Agent Framework's ``AGUIChatClient`` as the interop lane drives it, run in its own
virtualenv (tests/interop/peers/agent_framework.txt):
``python agent_framework_client.py URL SCENARIO`` with SCENARIO ``plain``, ``approve`` or
``reject`` (each of the last two maybe with ``-then-continue``: a later turn follows, with the
history the client holds). It prints one JSON object: the texts of its responses, the
interrupts it saw and the finish reasons, for the test to check.

The client gives an approval round trip no typed contents: the interrupts stay in the
response's ``additional_properties`` and the resume goes out through ``options["resume"]``,
with only the user message re-sent (as its users do).
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from agent_framework import Message
from agent_framework_ag_ui import AGUIChatClient


async def main(url: str, scenario: str) -> dict[str, Any]:
    out: dict[str, Any] = {"texts": [], "interrupts": [], "finish": []}
    async with AGUIChatClient(endpoint=url) as client:
        prompt = "hello" if scenario == "plain" else "please delete the report.txt"
        metadata = {"thread_id": f"t-maf-{scenario}"}
        first = await client.get_response(
            [Message("user", [prompt])], options={"metadata": metadata}
        )
        out["texts"].append(first.text)
        out["finish"].append(str(first.finish_reason))
        interrupts = (first.additional_properties or {}).get("interrupts") or []
        out["interrupts"] = interrupts
        if scenario == "plain":
            return out
        resume = [
            {
                "interruptId": i["id"],
                "status": "resolved",
                "payload": {"approved": scenario.startswith("approve")},
            }
            for i in interrupts
        ]
        second = await client.get_response(
            [Message("user", [prompt])], options={"metadata": metadata, "resume": resume}
        )
        out["texts"].append(second.text)
        out["finish"].append(str(second.finish_reason))
        if scenario.endswith("-then-continue"):  # a later turn with the history it holds
            history = [Message("user", [prompt]), *first.messages, *second.messages]
            history.append(Message("user", ["thanks"]))
            try:
                third = await client.get_response(history, options={"metadata": metadata})
                out["texts"].append(third.text)
            except Exception as exc:  # what it raises for a RUN_ERROR
                out["error"] = f"{type(exc).__name__}: {exc}"
    return out


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(sys.argv[1], sys.argv[2]))))
