"""``AGUIServer(ui=True)`` over HTTP (no browser): GET answers one self-contained page with
a strict Content-Security-Policy, POST stays the AG-UI endpoint, the page is off by default,
and the committed bundle carries the licenses of the pinned packages it was built from."""

from __future__ import annotations

import gzip
import hashlib
import json
import re
from pathlib import Path

from server_support import run_input, sse_events, user

from agui_chat.testing import ScriptedChatClient
from agui_server import ServedAgent, agui_server

ROOT = Path(__file__).resolve().parents[3]
UI = ROOT / "src" / "agui_chat" / "agui" / "server" / "_ui"


def _server(**kwargs: object) -> ServedAgent:
    model = ScriptedChatClient(lambda messages, options: "hello there")
    return agui_server(model, **kwargs)


async def test_the_page_is_off_by_default() -> None:
    async with _server().client() as client:
        response = await client.get("/")
    assert response.status_code == 405
    assert response.headers["allow"] == "POST"


async def test_get_serves_the_page_and_post_stays_the_endpoint() -> None:
    async with _server(ui=True).client() as client:
        page = await client.get("/", headers={"accept-encoding": "identity"})
        head = await client.head("/", headers={"accept-encoding": "identity"})
        run = await client.post("/", json=run_input(user("hi")))
    assert page.status_code == 200
    assert page.headers["content-type"] == "text/html; charset=utf-8"
    assert "<script>" in page.text and "/*APP_JS*/" not in page.text
    assert head.status_code == 200 and head.content == b""
    assert int(head.headers["content-length"]) == len(page.content)
    types = [e["type"] for e in sse_events(run.content)]
    assert types[0] == "RUN_STARTED" and types[-1] == "RUN_FINISHED"


async def test_the_page_allows_only_its_own_script_style_and_origin() -> None:
    async with _server(ui=True).client() as client:
        page = await client.get("/", headers={"accept-encoding": "identity"})
    csp = page.headers["content-security-policy"]
    assert "default-src 'none'" in csp and "connect-src 'self'" in csp
    assert re.search(r"script-src 'sha256-[A-Za-z0-9+/=]+'$", csp.split(";")[1].strip())
    assert "unsafe-inline" not in csp and "unsafe-eval" not in csp
    assert page.headers["x-content-type-options"] == "nosniff"
    # Nothing is loaded from elsewhere: no src= or href= outside the page itself.
    assert not re.search(r"""<(script|link|img)[^>]+(src|href)=["']?https?:""", page.text)


async def test_the_page_is_sent_compressed_when_the_browser_accepts_it() -> None:
    async with _server(ui=True).client() as client:
        plain = await client.get("/", headers={"accept-encoding": "identity"})
        request = client.build_request("GET", "/", headers={"accept-encoding": "gzip"})
        raw = await client.send(request, stream=True)
        compressed = b"".join([chunk async for chunk in raw.aiter_raw()])
        await raw.aclose()
    assert raw.headers["content-encoding"] == "gzip"
    assert gzip.decompress(compressed) == plain.content
    assert len(compressed) < len(plain.content) / 2


def test_the_committed_bundle_carries_the_licenses_of_its_pinned_packages() -> None:
    bundle = (UI / "app.js").read_text("utf-8")
    header = bundle.split("*/", 1)[0]
    pins = json.loads((ROOT / "ui" / "package.json").read_text("utf-8"))["dependencies"]
    lock = json.loads((ROOT / "ui" / "package-lock.json").read_text("utf-8"))["packages"]
    for name, version in pins.items():
        assert f"==== {name} {version} (" in header, name
        assert lock[f"node_modules/{name}"]["version"] == version
    for match in re.finditer(r"==== (\S+) (\S+) \(", header):
        assert lock[f"node_modules/{match.group(1)}"]["version"] == match.group(2)
    assert header.count("Permission is hereby granted") >= 5  # the MIT texts themselves
    assert "</script" not in bundle.lower()


def test_the_committed_bundle_was_built_from_the_sources_in_ui() -> None:
    """``make ui-bundle`` writes the hash of what it built from; a stale bundle fails here."""
    folder = ROOT / "ui"
    paths = ["build.mjs", "package.json", "package-lock.json"]
    paths += [f"src/{p.name}" for p in (folder / "src").iterdir()]
    digest = hashlib.sha256()
    for path in sorted(paths):
        digest.update(path.encode() + b"\0" + (folder / path).read_bytes() + b"\0")
    header = (UI / "app.js").read_text("utf-8").split("*/", 1)[0]
    assert f"Built from the sources sha256:{digest.hexdigest()} " in header, (
        "src/agui_chat/agui/server/_ui/app.js is stale: run `make ui-bundle` and commit it"
    )


def _server_codes() -> set[str]:
    """Every RUN_ERROR / refusal code the server can send: docs/errors.md's table when it
    exists, and the codes written in the server's sources."""
    codes: set[str] = set()
    errors_md = ROOT / "docs" / "errors.md"
    if errors_md.exists():
        codes |= set(re.findall(r"^\|\s*`([A-Z][A-Z0-9_]+)`", errors_md.read_text(), re.M))
    for source in (ROOT / "src" / "agui_chat" / "agui" / "server").glob("*.py"):
        text = source.read_text("utf-8")
        codes |= set(re.findall(r'ResumeRejected\(\s*"([A-Z_]+)"', text))
        codes |= set(re.findall(r'InputError\(\s*\d+,\s*"([A-Z_]+)"', text))
        codes |= set(re.findall(r'"([A-Z]+_ERROR)"', text))
        codes |= set(re.findall(r'\(\w+, "(RESUME_[A-Z_]+)", "', text))
        for suffix in re.findall(r'f"\{[\w.]*prefix\}_([A-Z_]+)"', text):
            codes |= {f"APPROVAL_{suffix}", f"INTERRUPT_{suffix}"}
    return codes - {"RUN_ERROR"}


def test_the_page_has_words_for_every_code_the_server_sends() -> None:
    words = (ROOT / "ui" / "src" / "errors.js").read_text("utf-8")
    known = set(re.findall(r"^  ([A-Z][A-Z0-9_]+):", words, re.M))
    codes = _server_codes()
    assert {"MODEL_ERROR", "RESUME_INCOMPLETE", "APPROVAL_FORGED", "INVALID_JSON"} <= codes
    assert codes - known == set(), "add these codes to RUN_ERROR_WORDS in ui/src/errors.js"
