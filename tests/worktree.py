"""A copy of the working tree as it is now: the files a commit of everything would hold (tracked and untracked,
minus ignored and deleted ones), for tests that build or clone the project as a user would."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def working_tree_files() -> list[str]:
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                            check=True, capture_output=True, text=True).stdout.split("\0")
    return sorted(name for name in set(listed) if name and (REPO / name).is_file())


def copy_working_tree(destination: Path) -> Path:
    for name in working_tree_files():
        (destination / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, destination / name)
    return destination
