"""Print the mutation score of the last ``mutmut run`` per module and in all, and exit
non-zero below ``--min`` percent (killed + timeouts over the mutants tested)."""

from __future__ import annotations

import argparse
import collections
import re
import subprocess
import sys


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--min", type=float, default=90.0, help="the lowest passing score, %%")
    args = parser.parse_args()
    listing = subprocess.run(
        [sys.executable, "-m", "mutmut", "results", "--all", "true"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    per_module: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for line in listing.splitlines():
        name, _, status = line.strip().rpartition(": ")
        if not name:
            continue
        module = re.split(r"\.x[_ǁ]", name, maxsplit=1)[0]
        per_module[module][status] += 1
    total: collections.Counter[str] = collections.Counter()
    for module, counts in sorted(per_module.items()):
        total.update(counts)
        print(f"{module:50} {_score(counts):6.1f}%  {dict(counts)}")
    score = _score(total)
    print(f"{'all':50} {score:6.1f}%  {dict(total)}")
    return 0 if score >= args.min else 1


def _score(counts: collections.Counter[str]) -> float:
    tested = sum(n for status, n in counts.items() if status not in ("skipped", "not checked"))
    return 100.0 * (counts["killed"] + counts["timeout"]) / tested if tested else 0.0


if __name__ == "__main__":
    sys.exit(main())
