"""An adapter whose extra is not installed fails on import with the ``pip install`` line that
adds it; any other import error is left as it is."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from agui_chat._extras import needs_extra


def test_a_missing_module_of_the_extra_names_the_install_line() -> None:
    with pytest.raises(ImportError) as caught, needs_extra("zz", by="the zz adapter"):
        import zz.sub  # type: ignore[import-not-found]  # noqa: F401
    assert str(caught.value) == "the zz adapter needs the 'zz' package: pip install 'agui-chat[zz]'"
    assert isinstance(caught.value.__cause__, ModuleNotFoundError)


def test_another_missing_module_is_not_blamed_on_the_extra() -> None:
    with pytest.raises(ModuleNotFoundError) as caught, needs_extra("zz", by="zz"):
        import zzz_other  # type: ignore[import-not-found]  # noqa: F401
    assert caught.value.name == "zzz_other"


@pytest.mark.parametrize(
    ("blocked", "module", "message"),
    [
        ("mcp", "agui_chat.mcp", "agui_chat.mcp needs the 'mcp' package: "),
        ("openai", "agui_chat.openai", "agui_chat.openai needs the 'openai' package: "),
        ("redis", "agui_chat.stores._redis", "RedisApprovalStore needs redis-py: "),
    ],
)
def test_each_adapter_without_its_extra_names_it(blocked: str, module: str, message: str) -> None:
    script = textwrap.dedent(
        f"""
        import importlib, sys
        sys.modules[{blocked!r}] = None  # as if the extra were not installed
        try:
            importlib.import_module({module!r})
        except ImportError as exc:
            print(exc)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == f"{message}pip install 'agui-chat[{blocked}]'"


def _server_name_import_error(blocked: str) -> str:
    script = textwrap.dedent(
        f"""
        import sys
        sys.modules[{blocked!r}] = None
        import agui_chat.agui
        try:
            agui_chat.agui.AGUIServer
        except ImportError as exc:
            print(exc)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    return done.stdout.strip()


def test_a_server_name_without_starlette_names_the_server_extra() -> None:
    assert _server_name_import_error("starlette") == (
        "agui_chat.agui.AGUIServer needs Starlette: pip install 'agui-chat[server]'"
    )


def test_a_broken_module_of_ours_is_not_blamed_on_the_server_extra() -> None:
    message = _server_name_import_error("agui_chat.agui.server._signing")
    assert "agui_chat.agui.server._signing" in message
    assert "pip install" not in message
