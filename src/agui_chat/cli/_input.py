"""Reading the person's lines without blocking the event loop, and Ctrl-C like a shell.

:class:`LineReader` reads standard input in one background thread, one line per request.
A prompt abandoned by Ctrl-C leaves its read pending, and the next prompt takes it over, so
no line is ever read twice or lost (at a terminal, the kernel throws away the half-typed
line on Ctrl-C anyway). It reads the file descriptor with ``os.read``, never through
``sys.stdin``'s buffer: a thread blocked there would hold the buffer's lock when the
interpreter shuts down. (A reader thread was chosen over ``prompt_toolkit``: no dependency,
no import cost, no escape sequences, and a pipe or a file reads exactly like a terminal.)
The one line that starts with text for the person to change (:meth:`LineReader.edit`: a
call's arguments, to edit) is read through GNU readline where there is one, at a terminal.

:class:`CtrlC` owns SIGINT while a session runs: a Ctrl-C cancels the one operation run
through :meth:`CtrlC.run` (a prompt or a streaming turn), which then raises
:class:`Interrupted`; between operations a Ctrl-C is remembered for the next one. No
``KeyboardInterrupt`` ever reaches the event loop, so no traceback either.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import signal
import threading
from collections.abc import Awaitable
from typing import IO, Any, TypeVar

__all__ = ["CtrlC", "Interrupted", "LineReader"]

T = TypeVar("T")


class Interrupted(Exception):
    """The person pressed Ctrl-C during the operation."""


class LineReader:
    """``await reader.readline()``: the next line without its newline, ``None`` at the end
    of input (a pipe that ended, or Ctrl-D at a terminal)."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream
        try:
            self._fd: int | None = stream.fileno()
        except (AttributeError, OSError, ValueError):  # a StringIO, in tests
            self._fd = None
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._buffer = ""
        self._pending: asyncio.Future[str | None] | None = None

    def _read_line(self) -> str | None:
        """Blocking: one line from the stream (runs in the reader thread)."""
        if self._fd is None:
            line = self._stream.readline()
            return line.rstrip("\r\n") if line else None
        while "\n" not in self._buffer:
            chunk = os.read(self._fd, 4096)
            if not chunk:  # end of input; what was typed without a newline still counts
                rest, self._buffer = self._buffer + self._decoder.decode(b"", final=True), ""
                return rest or None
            self._buffer += self._decoder.decode(chunk)
        line, self._buffer = self._buffer.split("\n", 1)
        return line.rstrip("\r")

    async def readline(self) -> str | None:
        if self._pending is None or self._pending.done():
            self._pending = _in_thread(self._read_line)
        pending = self._pending
        result = await asyncio.shield(pending)
        self._pending = None
        return result

    def can_prefill(self) -> bool:
        """Whether :meth:`edit` can put text on the line for the person to change: standard
        input and output are a terminal, GNU readline is installed, and no line typed ahead
        is waiting or being read (it would come before the edited one)."""
        if self._fd != 0 or self._buffer or not (self._pending is None or self._pending.done()):
            return False
        return os.isatty(0) and os.isatty(1) and _gnu_readline()

    async def edit(self, prompt: str, text: str) -> str | None:
        """The line typed after ``prompt``, which starts as ``text`` (only where
        :meth:`can_prefill`): ``None`` at the end of input, :class:`Interrupted` on Ctrl-C."""
        self._pending = _in_thread(lambda: _edit_line(prompt, text))
        line = await asyncio.shield(self._pending)
        self._pending = None
        if line == _CTRL_C_KEY:
            raise Interrupted
        return line


#: What Ctrl-C enters at a pre-filled line, after emptying it: what a terminal echoes for it.
_CTRL_C_KEY = "^C"


def _gnu_readline() -> bool:
    """Whether Python's ``readline`` is GNU readline (editline reads key bindings otherwise)."""
    try:
        import readline
    except ImportError:  # Windows, or a Python built without it
        return False
    backend = getattr(readline, "backend", None)  # Python 3.13+
    return backend == "readline" if backend else "libedit" not in (readline.__doc__ or "")


def _edit_line(prompt: str, text: str) -> str | None:
    """Blocking (in the reader thread): ``input(prompt)`` through GNU readline, with ``text``
    already typed. For its time Ctrl-C is a key, not a signal: a signal would leave readline
    holding the terminal in this thread, and its line would go to the next prompt. The key
    empties the line and enters ``^C``."""
    import readline
    import termios

    saved = termios.tcgetattr(0)
    keys = termios.tcgetattr(0)
    try:
        disabled = os.fpathconf(0, "PC_VDISABLE")
    except (OSError, ValueError):
        disabled = -1
    keys[6][termios.VINTR] = bytes([disabled if 0 <= disabled <= 255 else 0])
    readline.set_auto_history(False)
    readline.parse_and_bind(rf'"\C-c": "\C-e\C-u{_CTRL_C_KEY}\n"')
    readline.set_startup_hook(lambda: readline.insert_text(text))
    termios.tcsetattr(0, termios.TCSANOW, keys)
    try:
        return input(prompt)
    except EOFError:
        return None
    finally:
        readline.set_startup_hook(None)
        termios.tcsetattr(0, termios.TCSANOW, saved)


def _in_thread(work: Any) -> asyncio.Future[Any]:
    """Run ``work()`` in a daemon thread (an executor's worker would keep the process alive
    at exit while it waits for a line)."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()

    def settle(value: Any, error: BaseException | None) -> None:
        if future.done():
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(value)

    def run() -> None:
        try:
            value, error = work(), None
        except BaseException as exc:  # handed to the loop; the thread itself just ends
            value, error = None, exc
        with contextlib.suppress(RuntimeError):  # the loop already closed
            loop.call_soon_threadsafe(settle, value, error)

    threading.Thread(target=run, name="agui-chat-stdin", daemon=True).start()
    return future


class CtrlC:
    """SIGINT, handled inside the event loop while the ``with`` block runs."""

    def __init__(self) -> None:
        self._current: asyncio.Future[Any] | None = None
        self._missed = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._previous: Any = None

    def __enter__(self) -> CtrlC:
        self._loop = asyncio.get_running_loop()
        try:
            self._loop.add_signal_handler(signal.SIGINT, self._pressed)
        except (NotImplementedError, RuntimeError):  # not the main thread, or no signals
            self._loop = None
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._loop is not None:
            self._loop.remove_signal_handler(signal.SIGINT)

    def _pressed(self) -> None:
        if self._current is not None and not self._current.done():
            self._current.cancel()
        else:
            self._missed = True

    async def run(self, operation: Awaitable[T]) -> T:
        """Await ``operation``; :class:`Interrupted` if Ctrl-C is pressed meanwhile (the
        operation is cancelled first, so its ``finally`` blocks have run)."""
        task = asyncio.ensure_future(operation)
        if self._missed:
            self._missed = False
            task.cancel()
        self._current = task
        try:
            await asyncio.wait({task})
        except asyncio.CancelledError:
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
            raise
        finally:
            self._current = None
        if task.cancelled():
            raise Interrupted
        return task.result()
