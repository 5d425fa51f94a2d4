"""The fault lane (``tests/faults``, issue 26 item 7): the disk under a SQLite store fills up,
or fails and goes read-only, while four workers resume approvals on it.

The disk is real: a 16 MiB ext4 file system in a file, loop-mounted (``mount -o loop``,
``errors=remount-ro``, no blocks reserved for root, since root writes past file modes and
reserved blocks alike). "Full" is a filler file taking every free block, so SQLite's
writes fail with ``SQLITE_FULL``. "Read-only under running workers" is ext4's own answer to
a failing disk: ``/sys/fs/ext4/<dev>/trigger_fs_error`` records a file system error and the
kernel makes the file system read-only at once, for every open file (a plain ``mount -o
remount,ro`` is refused while files are open for writing, so that cannot happen to running
workers); it stays so until it is unmounted, checked (``e2fsck``) and mounted again, with
the workers stopped, as an operator would. The workers then start on it mounted read-only,
and it is made writable under them.

Every claim, "started" mark and result is refused with ``APPROVAL_STORE_UNAVAILABLE``
(nothing ran, nothing used up) while the disk cannot take it; once it can, every approved
call runs at most once, exactly once where its result came back, and a result that could
not be kept replays as lost (its tool never runs again). The store runs with
``synchronous=FULL`` here: a disk that fails loses what the kernel had not yet written
out, as a power loss does, and ``NORMAL`` does not promise to survive that (docs/stores.md).

Needs root (to mount); elsewhere the tests skip saying so (and fail under ``CI``)."""

from __future__ import annotations

import asyncio
import errno
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from fault_lane import (
    Case,
    Deployment,
    check_at_most_once,
    first_line,
    pause_all,
    replay_everywhere,
    send_all,
    when,
)

from agui_chat.stores import SQLiteApprovalStore
from real_components import missing

UNAVAILABLE = "APPROVAL_STORE_UNAVAILABLE"


class SmallDisk:
    """A small ext4 file system in ``image``, mounted at ``path``."""

    def __init__(self, image: Path, path: Path) -> None:
        self.image = image
        self.path = path
        self.filler = path / "filler"

    def _run(self, *argv: str, ok: tuple[int, ...] = (0,)) -> None:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        assert done.returncode in ok, f"{argv}: {done.stdout}{done.stderr}"

    def make(self) -> None:
        with self.image.open("wb") as image:
            image.truncate(16 * 1024 * 1024)
        self._run("mkfs.ext4", "-q", "-F", "-m", "0", str(self.image))
        self.path.mkdir()
        self.mount()

    def mount(self, *options: str) -> None:
        joined = ",".join(("loop", "errors=remount-ro", *options))
        self._run("mount", "-o", joined, str(self.image), str(self.path))

    def unmount(self) -> None:
        self._run("umount", str(self.path))

    def fill(self) -> None:
        """Take every free block (a megabyte at a time, then a block at a time)."""
        fd = os.open(self.filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            for size in (1 << 20, 4096):
                while True:
                    try:
                        os.write(fd, b"\0" * size)
                        os.fsync(fd)
                    except OSError as exc:
                        assert exc.errno == errno.ENOSPC, exc
                        break
        finally:
            os.close(fd)

    def free(self) -> None:
        self.filler.unlink()

    def fail(self) -> None:
        """A file system error: the kernel makes it read-only under every open file."""
        source = subprocess.run(
            ["findmnt", "-no", "SOURCE", str(self.path)], capture_output=True, text=True
        ).stdout.strip()
        trigger = Path("/sys/fs/ext4", Path(source).name, "trigger_fs_error")
        trigger.write_text("fault lane: the disk failed\n")

    def repair(self, *, read_only: bool = False) -> None:
        """Unmount, check and mount again (the workers must be stopped); ``read_only``: then
        remount it read-only (its loop device stays writable, so it can be made writable
        again under running workers)."""
        self.unmount()
        self._run("e2fsck", "-f", "-y", str(self.image), ok=(0, 1, 2))
        self.mount()
        if read_only:
            self._run("mount", "-o", "remount,ro", str(self.path))

    def writable(self) -> None:
        self._run("mount", "-o", "remount,rw", str(self.path))


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[SmallDisk]:
    if os.geteuid() != 0:
        missing("root (to loop-mount a small ext4 file system)", "run the tests as root")
    disk = SmallDisk(tmp_path / "disk.img", tmp_path / "disk")
    try:
        disk.make()
    except (AssertionError, OSError) as exc:  # no mkfs.ext4, or no loop devices here
        missing(f"a loop-mountable ext4 ({exc})", "apt-get install e2fsprogs mount (make test)")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk.path)], capture_output=True)


def deploy(disk: SmallDisk, tmp_path: Path) -> Deployment:
    effects = tmp_path / "effects"  # on the machine's own disk
    effects.mkdir(exist_ok=True)
    url = f"sqlite:///{disk.path}/approvals.db?synchronous=FULL"
    deployment = Deployment(url, effects, CLAIM_PAUSE="0.3", TOOL_PAUSE="0.3")
    deployment.start()
    return deployment


def refused_and_never_ran(deployment: Deployment, cases: list[Case], code: str) -> None:
    """The cases still unsettled met ``code`` and none of their tools ran."""
    for case in cases:
        if case.outcome is None:
            assert code in case.codes, case
            assert deployment.runs(case.thread) == [], case


async def test_a_full_disk_refuses_claims_and_each_approval_runs_once_when_it_is_freed(
    small_disk: SmallDisk, tmp_path: Path, client: httpx.AsyncClient
) -> None:
    deployment = deploy(small_disk, tmp_path)
    try:
        cases = await pause_all(deployment, client, 12)
        small_disk.fill()
        await send_all(deployment, client, cases, rounds=2, settle=False)
        refused_and_never_ran(deployment, cases, UNAVAILABLE)
        assert any(c.outcome is None for c in cases), cases  # the full disk refused some
        small_disk.free()
        await send_all(deployment, client, cases)
        check_at_most_once(deployment, cases)
        await replay_everywhere(deployment, client, cases, results_may_be_lost=True)
    finally:
        deployment.stop()


async def test_a_disk_gone_read_only_under_the_workers_runs_no_approval_twice(
    small_disk: SmallDisk, tmp_path: Path, client: httpx.AsyncClient
) -> None:
    deployment = deploy(small_disk, tmp_path)
    try:
        cases = await pause_all(deployment, client, 12)
        storm = asyncio.ensure_future(send_all(deployment, client, cases, rounds=5, settle=False))
        try:
            everyone = {w.pid for w in deployment.workers if w.pid is not None}
            ran = lambda: first_line(deployment, cases, "effects", everyone) is not None  # noqa: E731
            await when(ran, "a tool run")
            small_disk.fail()
            await storm
        finally:
            storm.cancel()
        assert any(c.outcome is None for c in cases), cases
        refused_and_never_ran(deployment, cases, UNAVAILABLE)

        deployment.stop()  # the operator: stop, check the disk, start on it read-only
        small_disk.repair(read_only=True)
        for case in cases:
            case.codes.clear()
        deployment.start()
        await send_all(deployment, client, cases, rounds=1, settle=False)
        refused_and_never_ran(deployment, cases, UNAVAILABLE)

        small_disk.writable()  # under the running workers: their store opens it again
        await send_all(deployment, client, cases)
        check_at_most_once(deployment, cases)
        await replay_everywhere(deployment, client, cases, results_may_be_lost=True)
    finally:
        deployment.stop()


async def test_workers_started_on_a_read_only_disk_pause_and_run_each_answer_once_after(
    small_disk: SmallDisk, tmp_path: Path, client: httpx.AsyncClient
) -> None:
    """The workers start while the disk is read-only, so they cannot read the store's epoch;
    their pauses carry the second they were issued. Made writable, the store is the one it
    was (its epoch an hour old): every answer runs once, none is refused as a reset."""
    url = f"sqlite:///{small_disk.path}/approvals.db?synchronous=FULL"
    seeded = SQLiteApprovalStore(small_disk.path / "approvals.db", clock=lambda: time.time() - 3600)
    await seeded.epoch()
    await seeded.aclose()
    small_disk.repair(read_only=True)
    effects = tmp_path / "effects"
    effects.mkdir()
    deployment = Deployment(url, effects, CLAIM_PAUSE="0.3", TOOL_PAUSE="0.3")
    deployment.start()
    try:
        cases = await pause_all(deployment, client, 8)
        await send_all(deployment, client, cases, rounds=1, settle=False)
        refused_and_never_ran(deployment, cases, UNAVAILABLE)
        assert all(c.outcome is None for c in cases), cases
        small_disk.writable()
        await send_all(deployment, client, cases)
        check_at_most_once(deployment, cases)
        assert all(c.outcome != "APPROVAL_STORE_RESET" for c in cases), cases
        await replay_everywhere(deployment, client, cases)
    finally:
        deployment.stop()
