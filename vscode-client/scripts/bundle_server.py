"""Fills bundled/ for the .vsix: a copy of autograd_lsp and its pure-Python dependencies (never torch).

The extension starts this copy with the user's interpreter when that interpreter has no autograd_lsp of its
own: PYTHONPATH=bundled/libs:bundled/tool. The dependencies come from the repository's pyproject.toml and are
resolved for its oldest supported Python, so that the one bundle serves every supported version.
"""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

CLIENT = Path(__file__).resolve().parents[1]
REPOSITORY = CLIENT.parent
BUNDLED = CLIENT / "bundled"
# jedi's stubs for third-party libraries (requests, Django...): 4,800 of the bundle's 5,800 files and 27 MB,
# never consulted for torch code; jedi skips a missing stub folder. The stdlib stubs stay.
PRUNED = ("jedi/third_party/typeshed/stubs", "jedi/third_party/django-stubs")
COMPILED_SUFFIXES = {".so", ".pyd", ".dylib", ".dll"}
# Backports that Python 3.10 needs (tomli for config.py, exceptiongroup for cattrs), named without their
# markers: pip evaluates markers against the Python running it, not against --python-version.
EXTRA_REQUIREMENTS = ["tomli>=1.1", "exceptiongroup>=1.1.1"]


def requirement_name(requirement: str) -> str:
    return re.split(r"[\s<>=!~;\[(]", requirement.strip(), maxsplit=1)[0].lower().replace("_", "-")


def main() -> int:
    project = tomllib.loads((REPOSITORY / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    oldest_python = re.search(r">=\s*(\d+\.\d+)", project.get("requires-python", ">=3.10")).group(1)
    requirements = [*project["dependencies"], *EXTRA_REQUIREMENTS]
    if any(requirement_name(requirement) == "torch" for requirement in requirements):
        print("bundle_server: torch is a dependency of the server; it must never be bundled", file=sys.stderr)
        return 1

    shutil.rmtree(BUNDLED, ignore_errors=True)
    shutil.copytree(REPOSITORY / "autograd_lsp", BUNDLED / "tool" / "autograd_lsp",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    # --python-version needs --only-binary: wheels only, so nothing is built and nothing native sneaks in unseen.
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-compile",
         "--target", str(BUNDLED / "libs"), "--python-version", oldest_python, "--only-binary=:all:", *requirements],
        check=True,
    )
    shutil.rmtree(BUNDLED / "libs" / "bin", ignore_errors=True)  # console scripts with this machine's paths
    for unused in PRUNED:
        shutil.rmtree(BUNDLED / "libs" / unused)

    libs = BUNDLED / "libs"
    compiled = [path for path in libs.rglob("*") if path.suffix in COMPILED_SUFFIXES]
    if compiled:
        print(f"bundle_server: compiled files would tie the bundle to one platform: {compiled[:5]}", file=sys.stderr)
        return 1
    if (libs / "torch").exists():
        print("bundle_server: torch was pulled in by a dependency; it must never be bundled", file=sys.stderr)
        return 1
    packages = sorted(path.name for path in libs.glob("*.dist-info"))
    print(f"bundle_server: autograd_lsp + {len(packages)} packages for Python >= {oldest_python}: {', '.join(packages)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
