"""The docs cannot drift from bench/results: every results table and quoted value in README.md and docs/ is what
bench/docs_tables.py makes from the files the benchmarks wrote, every marker names a table it knows, every link
leads somewhere, and the README stays short. The checks are run on a copy with one thing broken, to show they fail.

Run alone with: .venv/bin/python -m pytest tests/docs -q"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bench import docs_tables
from conftest import REPO


def only(problems: list[str], kind: str) -> list[str]:
    return [p for p in problems if kind in p]


def test_every_table_and_value_is_what_bench_results_gives():
    problems = docs_tables.check()
    differs = only(problems, " differs: ") + only(problems, "cannot be made")
    assert not differs, "run .venv/bin/python bench/docs_tables.py to write the docs again:\n  " + "\n  ".join(differs)


def test_every_marker_names_a_known_table_and_is_closed():
    problems = only(docs_tables.check(), "bench/docs_tables.py knows") + only(docs_tables.check(), "has no <!-- /")
    assert not problems, "\n".join(problems)


def test_every_link_leads_to_a_file_and_heading():
    problems = only(docs_tables.check(), ": link ")
    assert not problems, "\n".join(problems)


def test_the_readme_is_short():
    lines = len((REPO / "README.md").read_text().splitlines())
    assert lines <= docs_tables.README_LINES, f"README.md has {lines} lines: move the detail to docs/"


def test_every_table_and_value_is_used_somewhere():
    text = "".join(page.read_text() for page in docs_tables.pages())
    unused = [f"table {n}" for n in docs_tables.TABLES if f"<!-- table: {n} -->" not in text]
    unused += [f"value {n}" for n in docs_tables.VALUES if f"<!-- value: {n} -->" not in text]
    assert not unused, f"defined in bench/docs_tables.py, used on no page: {unused}"


# --- the checks fail when they should -----------------------------------------------------------------------------


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """README.md, docs/ and bench/results/ copied: a tree the checks can be shown to fail on."""
    shutil.copy(REPO / "README.md", tmp_path / "README.md")
    shutil.copytree(REPO / "docs", tmp_path / "docs")
    shutil.copytree(REPO / "bench" / "results", tmp_path / "bench" / "results")
    assert docs_tables.check(tmp_path) == docs_tables.check(REPO)
    return tmp_path


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{path.name} no longer holds {old!r}: pick another line for this test"
    path.write_text(text.replace(old, new, 1))


def test_a_changed_cell_is_caught_naming_the_table_and_line(copy: Path):
    page = copy / "docs" / "results" / "unis.md"
    row = next(line for line in page.read_text().splitlines() if line.startswith("| light | 3 | 2048 |"))
    edit(page, row, row.replace("| light | 3 | 2048 |", "| light | 3 | 2049 |"))
    problems = only(docs_tables.check(copy), " differs: ")
    assert len(problems) == 1 and "table unis-capacity differs" in problems[0] and "2049" in problems[0], problems


def test_a_changed_value_is_caught(copy: Path):
    page = copy / "docs" / "results" / "platform.md"
    text = page.read_text()
    start = text.index("<!-- value: generator-capacity.mpps -->") + len("<!-- value: generator-capacity.mpps -->")
    page.write_text(text[:start] + "99" + text[start:])
    problems = only(docs_tables.check(copy), " differs: ")
    assert len(problems) == 1 and "value generator-capacity.mpps differs" in problems[0], problems


def test_a_result_measured_again_is_caught_and_update_writes_it(copy: Path):
    result = copy / "bench" / "results" / "scc-capacity.md"
    row = next(line for line in result.read_text().splitlines() if line.startswith("mux 32"))
    edit(result, row, row[:-5] + "9.999")
    problems = only(docs_tables.check(copy), " differs: ")
    assert len(problems) == 1 and "table scc-capacity differs" in problems[0] and "9.999" in problems[0], problems
    written, failed = docs_tables.update(copy)
    assert written == ["docs/results/scc.md"] and not failed
    assert docs_tables.check(copy) == docs_tables.check(REPO)


def test_a_stale_mark_goes_once_the_result_is_measured_again(copy: Path):
    result = copy / "bench" / "results" / "fault-soak.md"
    result.write_text(result.read_text() + "\n")
    docs_tables.update(copy)
    platform = (copy / "docs" / "results" / "platform.md").read_text()
    assert "<!-- value: stale.fault-soak --><!-- /value -->" in platform
    assert (
        "fault-soak.md"
        not in (copy / "docs" / "results" / "overview.md")
        .read_text()
        .split("## Stale results")[1]
        .split("## Measuring again")[0]
    )


def test_an_unknown_marker_is_caught(copy: Path):
    page = copy / "docs" / "results" / "bubble.md"
    page.write_text(page.read_text() + "\n<!-- table: no-such-table -->\n<!-- /table -->\n")
    problems = only(docs_tables.check(copy), "knows")
    assert problems == ["docs/results/bubble.md: table no-such-table is not one bench/docs_tables.py knows"]


def test_an_unclosed_marker_is_caught(copy: Path):
    page = copy / "docs" / "results" / "bubble.md"
    page.write_text(page.read_text() + "\n<!-- table: bubble-load -->\n")
    assert only(docs_tables.check(copy), "has no <!-- /table -->")


def test_a_link_to_a_missing_result_or_heading_is_caught(copy: Path):
    page = copy / "docs" / "results" / "bubble.md"
    page.write_text(
        page.read_text() + "\n![gone](../../bench/results/no-such-plot.png)\n[there](scc.md#no-such-heading)\n"
    )
    problems = only(docs_tables.check(copy), ": link ")
    assert problems == [
        "docs/results/bubble.md: link ../../bench/results/no-such-plot.png leads to no file",
        "docs/results/bubble.md: link scc.md#no-such-heading names no heading of scc.md",
    ]


def test_a_long_readme_is_caught(copy: Path):
    readme = copy / "README.md"
    readme.write_text(readme.read_text() + "more\n" * docs_tables.README_LINES)
    assert only(docs_tables.check(copy), "README.md: ")


def test_github_anchors():
    assert docs_tables.slug("Chain length 1–8") == "chain-length-18"
    assert docs_tables.slug("Unmodified `dpdk-testpmd` as chain links") == "unmodified-dpdk-testpmd-as-chain-links"
    assert (
        docs_tables.slug("Table 4, where a kernel-I/O router's CPU goes")
        == "table-4-where-a-kernel-io-routers-cpu-goes"
    )
