"""CI proves bench/stores.py still runs (its timings are not asserted: see bench/README.md),
and checks the figures of it that are counts, not times: the durable flushes a SQLite store
makes per resume (counted under strace, when it is installed), and the store round trips
governance adds to a resume and to a run that does not pause (every store present)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "bench" / "stores.py"


def test_the_store_benchmark_runs_in_quick_mode() -> None:
    out = subprocess.run(
        [sys.executable, str(BENCH), "--quick"], capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stdout + out.stderr
    for figure in (
        "(flush)", "(claim)", "(resume)", "(floor)", "(flushes)", "(trips)", "(governance)",
        "sqlite (NORMAL)", "memory",
    ):  # fmt: skip
        assert figure in out.stdout, out.stdout
    check_trips(out.stdout)
    # The raw driver's floor of each durable store measured (SQLite always; Redis and
    # PostgreSQL when installed), with its split and its budget's place against it: the
    # figures are not judged, only that they are there, add up, and the floor is a time.
    durable = ["sqlite (FULL)"]
    durable += ["redis"] if shutil.which("redis-server") else []
    durable += ["postgres"] if "PostgreSQL not found" not in out.stdout else []
    number = r"([+-]\d+\.\d\d)"
    for name in durable:
        found = re.search(
            rf"^  {re.escape(name)}\s+extra {number} ms = floor {number} ms "
            rf"\(claim \d+\.\d\d, started \d+\.\d\d, result \d+\.\d\d\) \+ the store's "
            rf"overhead {number} ms; (floor ratio (\d+\.\d\d)x; )?budget <= [^:]+: "
            r"budget (below|above) the floor \(",
            out.stdout,
            re.MULTILINE,
        )
        assert found is not None, (name, out.stdout)
        extra, floor, overhead = (float(found[i]) for i in (1, 2, 3))
        assert floor > 0 and abs(extra - floor - overhead) <= 0.0151, found[0]
        assert (found[5] is not None) == (name == "redis"), found[0]
    if shutil.which("strace") is None:
        assert "not counted: strace not found" in out.stdout, out.stdout
        return
    # FULL: the started mark's commit, and nothing else (the claim and the result do not
    # wait for the disk); NORMAL: none at all.
    for mode, count in (("FULL", "1.00"), ("NORMAL", "0.00")):
        found = re.search(
            rf"sqlite \({mode}\)\s+(\d+\.\d\d) flushes per resume at commit", out.stdout
        )
        assert found is not None and found[1] == count, out.stdout


def check_trips(stdout: str) -> None:
    """Every store's (trips) line: governance adds at most one round trip to a resume (the
    first one, which reads the chain's head, and a later one), none to a run that does not
    pause, and a covered call reads the grants; and its (governance) time lines."""
    stores = ["memory", "sqlite (FULL)", "sqlite (NORMAL)"]
    stores += ["redis"] if shutil.which("redis-server") else []
    stores += ["postgres"] if "PostgreSQL not found" not in stdout else []
    trips = stdout.split("\n(trips)", 1)[1].split("\n(governance)", 1)[0]
    timed = stdout.split("\n(governance)", 1)[1]
    for name in stores:
        found = re.search(
            rf"^  {re.escape(name)}\s+resume: on (\d+), off (\d+), ([+-]\d+) \(the first: on "
            r"(\d+), off (\d+), ([+-]\d+)\) \(budget <= \+1: PASS\); no pause: on (\d+), off "
            r"(\d+), \+0 \(budget \+0: PASS\); covered by a grant: (\d+)\n +resume on \[.*\]; "
            r"covered \[.*_grants.*\]$",
            trips,
            re.MULTILINE,
        )
        assert found is not None, (name, stdout)
        on, off, extra, first_on, first_off, first_extra, run_on, run_off = (
            int(found[i]) for i in range(1, 9)
        )
        # the three writes of a resume (claim, started, result) at least, either way
        assert off >= 3 and on - off == extra <= 1, found[0]
        assert first_on - first_off == first_extra <= 1, found[0]
        assert run_on == run_off, found[0]
        figure = r"on\s+(\d+\.\d\d) ms vs off\s+(\d+\.\d\d) ms:\s+[+-]\d+\.\d\d ms \d+\.\d\dx"
        pair = rf"{figure}; CPU {figure}"
        found = re.search(
            rf"^  {re.escape(name)}\s+resume\s+{pair}\n\s+no pause {pair}$", timed, re.MULTILINE
        )
        assert found is not None, (name, stdout)
        assert all(float(found[i]) > 0 for i in range(1, 9)), found[0]
