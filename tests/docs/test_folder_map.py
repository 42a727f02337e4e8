"""docs/architecture.md's folder map names every folder that holds code, and no folder that is gone: a newcomer
who reads it finds each concept where it is.

Run alone with: .venv/bin/python -m pytest tests/docs -q"""

from __future__ import annotations

import re
import subprocess

from conftest import REPO

CODE = (".py", ".cc", ".h", ".sh", "meson.build")
# Folders of data, not code, each named in the map under the folder that holds it.
WITHIN = ("tests/", "bench/", "catalog/vnf-templates", "dataplane/runtimes/", "schedulers/")
MAPPED = re.compile(r"^\| `([^`]+)/` \|", re.M)


def code_folders() -> set[str]:
    listed = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True).stdout.split()
    folders = {name.rsplit("/", 1)[0] for name in listed if "/" in name and name.endswith(CODE)}
    return {folder for folder in folders if not folder.startswith(WITHIN) or folder == "bench"}


def mapped_folders(text: str) -> set[str]:
    return set(MAPPED.findall(text[text.index("## Folders") :]))


def test_every_code_folder_is_in_the_map_and_every_mapped_folder_exists():
    mapped = mapped_folders((REPO / "docs/architecture.md").read_text())
    missing = {folder for folder in code_folders() if folder not in mapped and not folder.startswith("tests")}
    assert not missing, f"docs/architecture.md's folder map lacks {sorted(missing)}"
    gone = sorted(folder for folder in mapped if not (REPO / folder).is_dir())
    assert not gone, f"docs/architecture.md's folder map names folders that do not exist: {gone}"


def test_the_map_reader_sees_a_row():
    # The check is only as good as its reading of the table: a row is seen, prose naming a folder is not.
    text = "## Folders\n\n| `nfs/` | the NFs |\nthe `bench/` folder\n"
    assert mapped_folders(text) == {"nfs"}
