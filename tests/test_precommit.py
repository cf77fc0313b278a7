"""The pre-commit hooks in .pre-commit-hooks.yaml, run by `pre-commit try-repo` on throwaway git repositories.

try-repo clones the hook repository at a commit and installs it into a fresh hook environment. It is given a
temporary repository holding the working tree as it is now (tracked and untracked, not ignored, files, in one
commit), so the test runs the hook definitions and code being tested, from a clean clone or from a checkout with
uncommitted changes alike (try-repo's own shadow copy would leave untracked files out)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from worktree import copy_working_tree

BUG_AG001 = "import torch\na = torch.ones(2, 2, requires_grad=True)\na += 2\n"
BUG_AG004 = "import torch\nx = torch.tensor([1, 2, 3], requires_grad=True)\n"
FIXED_AG004 = "import torch\nx = torch.tensor([1, 2, 3], requires_grad=True, dtype=torch.float32)\n"
CLEAN = "import torch\na = torch.ones(2, requires_grad=True)\nwith torch.no_grad():\n    a += 2\n"

pytestmark = pytest.mark.slow


def git(*args: str, cwd: Path, env: dict) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


@pytest.fixture(scope="module")
def env(tmp_path_factory) -> dict:
    home = tmp_path_factory.mktemp("home")
    inherited = {name: value for name, value in os.environ.items() if name not in ("PYTHONPATH", "PYTHONHOME")}
    return {**inherited, "HOME": str(home), "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"), "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_AUTHOR_NAME": "test", "GIT_AUTHOR_EMAIL": "test@example.invalid",
            "GIT_COMMITTER_NAME": "test", "GIT_COMMITTER_EMAIL": "test@example.invalid",
            "PRE_COMMIT_HOME": str(home / "pre-commit"), "PRE_COMMIT_COLOR": "never"}


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory, env) -> Path:
    """The working tree's files committed into a new repository: what try-repo clones."""
    root = copy_working_tree(tmp_path_factory.mktemp("hook-repo"))
    assert (root / ".pre-commit-hooks.yaml").is_file()
    git("init", "-q", cwd=root, env=env)
    git("add", "-A", cwd=root, env=env)
    git("commit", "-q", "-m", "working tree under test", cwd=root, env=env)
    return root


def project(root: Path, files: dict[str, str], env: dict) -> Path:
    root.mkdir()
    for name, text in files.items():
        (root / name).write_text(text, encoding="utf-8")
    git("init", "-q", cwd=root, env=env)
    git("add", "-A", cwd=root, env=env)
    return root


def try_repo(hook_repo: Path, project_root: Path, env: dict) -> subprocess.CompletedProcess:
    """Every hook of the manifest, on every file of the project (one hook environment for both hooks)."""
    return subprocess.run([sys.executable, "-m", "pre_commit", "try-repo", str(hook_repo), "--all-files"],
                          cwd=project_root, env=env, capture_output=True, text=True, timeout=600)


def hook_block(output: str, name: str) -> str:
    """The lines pre-commit printed for one hook: its status line up to the next hook's."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(name + "."))
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("autograd-lsp")), len(lines))
    return "\n".join(lines[start:end])


def test_buggy_files_fail_both_hooks_and_the_fix_hook_rewrites(hook_repo, tmp_path, env):
    root = project(tmp_path / "buggy", {"leaf.py": BUG_AG001, "ints.py": BUG_AG004}, env)
    result = try_repo(hook_repo, root, env)
    output = result.stdout + result.stderr
    assert result.returncode == 1, output

    check = hook_block(output, "autograd-lsp")
    assert "Failed" in check.splitlines()[0], check
    assert "leaf.py:3:1: AG001 in-place `+=` on `a`" in check
    assert "ints.py:2:29: AG004 [*] `torch.tensor(...)` makes an integer tensor" in check

    fix = hook_block(output, "autograd-lsp (fix)")
    assert "Failed" in fix.splitlines()[0], fix
    assert "files were modified by this hook" in fix
    assert "Fixed 1 problem." in fix
    assert "leaf.py:3:1: AG001" in fix  # only an unsafe fix exists: reported, not applied
    assert (root / "ints.py").read_text(encoding="utf-8") == FIXED_AG004
    assert (root / "leaf.py").read_text(encoding="utf-8") == BUG_AG001


def test_clean_files_pass_both_hooks(hook_repo, tmp_path, env):
    root = project(tmp_path / "clean", {"train.py": CLEAN, "ints.py": FIXED_AG004}, env)
    result = try_repo(hook_repo, root, env)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "Passed" in hook_block(output, "autograd-lsp").splitlines()[0], output
    assert "Passed" in hook_block(output, "autograd-lsp (fix)").splitlines()[0], output
