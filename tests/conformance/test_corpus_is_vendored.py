"""The conformance corpus is the repository's own (issue 25: on a clone with nothing beside
it, the lane skipped, because the corpus was read from ``../shared``): every fixture the
manifest lists is in ``corpus/``, with the AG-UI repository's MIT licence beside it, and no
test of the suite reads a path outside the repository."""

from __future__ import annotations

import re
from pathlib import Path

import test_corpus

TESTS = Path(__file__).resolve().parents[1]
CORPUS = Path(__file__).resolve().parent / "corpus"


def test_every_listed_fixture_is_in_the_repository() -> None:
    assert len(test_corpus.FIXTURES) >= 60
    for name in test_corpus.FIXTURES:
        assert (test_corpus.STREAMS / name).is_file(), name
    assert test_corpus.CORPUS == CORPUS  # read from here, not from beside the clone


def test_the_corpus_carries_its_licence() -> None:
    licence = (CORPUS / "LICENSE").read_text()
    assert licence.startswith("MIT License\n\nCopyright (c) 2025\n")
    assert "Permission is hereby granted, free of charge, to any person obtaining a copy" in licence
    assert "The above copyright notice and this permission notice shall be included" in licence
    readme = (CORPUS.parent / "README.md").read_text()
    assert "ag-ui-protocol/ag-ui" in readme and "corpus/LICENSE" in readme


#: A path to the shared folder beside the clone: ``../shared``, ``/work/shared``, ``/ "shared"``.
_OUTSIDE = re.compile(r"""(\.\./+shared|/work/shared|/\s*["']shared["'])""")


def test_no_test_reads_a_path_outside_the_repository() -> None:
    readers = [
        f"{path.relative_to(TESTS)}: {line.strip()}"
        for path in sorted(TESTS.rglob("*.py"))
        if path.name != Path(__file__).name
        for line in path.read_text().splitlines()
        if _OUTSIDE.search(line)
    ]
    assert readers == []
