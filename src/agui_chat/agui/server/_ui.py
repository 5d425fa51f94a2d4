"""The browser page ``AGUIServer(ui=True)`` serves on ``GET``: one self-contained HTML
document (``_ui/``, its style and script inlined), posting runs to the URL it was loaded from.
Its Content-Security-Policy allows only its own script and style (by hash) and requests to
its own origin."""

from __future__ import annotations

import base64
import gzip
import hashlib
from functools import lru_cache
from importlib import resources

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

_JS_MARK = "/*APP_JS*/"
_CSS_MARK = "/*APP_CSS*/"


class UIPage:
    """The page, built once: ``html`` (bytes), ``gzipped`` and the ``csp`` it is served with."""

    def __init__(self, template: str, css: str, js: str) -> None:
        if _JS_MARK not in template or _CSS_MARK not in template:
            raise ValueError("the page template lacks its script or style marker")
        html = template.replace(_CSS_MARK, css).replace(_JS_MARK, js)
        self.html = html.encode("utf-8")
        self.gzipped = gzip.compress(self.html, compresslevel=6, mtime=0)
        self.csp = "; ".join(
            [
                "default-src 'none'",
                f"script-src '{_sha256(js)}'",
                f"style-src '{_sha256(css)}'",
                "connect-src 'self'",
                "img-src 'self' data:",
                "base-uri 'none'",
                "form-action 'none'",
                "frame-ancestors 'none'",
            ]
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        accepts_gzip = "gzip" in request.headers.get("accept-encoding", "").lower()
        body = self.gzipped if accepts_gzip else self.html
        headers = {
            "content-security-policy": self.csp,
            "x-content-type-options": "nosniff",
            "referrer-policy": "no-referrer",
            "cache-control": "no-cache",
            "vary": "accept-encoding",
        }
        if accepts_gzip:
            headers["content-encoding"] = "gzip"
        response = Response(
            b"" if request.method == "HEAD" else body,
            media_type="text/html; charset=utf-8",
            headers=headers,
        )
        if request.method == "HEAD":
            response.headers["content-length"] = str(len(body))
        await response(scope, receive, send)


def _sha256(text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return "sha256-" + base64.b64encode(digest).decode("ascii")


@lru_cache(maxsize=1)
def page() -> UIPage:
    """The page shipped with the package (read once per process)."""
    folder = resources.files(__package__).joinpath("_ui")
    return UIPage(
        folder.joinpath("index.html").read_text("utf-8"),
        folder.joinpath("app.css").read_text("utf-8"),
        folder.joinpath("app.js").read_text("utf-8"),
    )
