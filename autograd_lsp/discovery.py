"""Which files `check` reads: .py/.pyi/.ipynb under the given paths, minus excludes and .gitignore'd paths."""
from __future__ import annotations

import fnmatch
import os
from pathlib import Path
from typing import Iterator

from .config import Settings

SUFFIXES = {".py", ".pyi", ".ipynb"}


class GitIgnore:
    """The subset of .gitignore syntax that matters for source trees: globs, dir/ patterns, anchors, negation."""

    def __init__(self, directory: Path, lines: list[str]):
        self.directory = directory
        self.patterns = []
        for raw in lines:
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            negate = line.startswith("!")
            line = line[1:] if negate else line
            dir_only = line.endswith("/")
            line = line.strip("/") if dir_only else line
            anchored = "/" in line.lstrip("/") or raw.strip().lstrip("!").startswith("/")
            self.patterns.append((line.lstrip("/"), negate, dir_only, anchored))

    @classmethod
    def load(cls, directory: Path) -> "GitIgnore | None":
        path = directory / ".gitignore"
        try:
            return cls(directory, path.read_text(encoding="utf-8", errors="replace").splitlines())
        except OSError:
            return None

    def ignored(self, path: Path, is_dir: bool) -> bool | None:
        try:
            relative = path.relative_to(self.directory).as_posix()
        except ValueError:
            return None
        verdict = None
        for pattern, negate, dir_only, anchored in self.patterns:
            if dir_only and not is_dir:
                continue
            target = relative if anchored else relative.rsplit("/", 1)[-1]
            if fnmatch.fnmatch(target, pattern) or (not anchored and fnmatch.fnmatch(relative, pattern)):
                verdict = not negate
        return verdict


def iter_files(paths: list[str], settings: Settings) -> Iterator[Path]:
    """Files to check, in a stable order; paths named explicitly are always checked."""
    seen = set()
    for raw in paths:
        path = Path(raw)
        if path.is_file():
            if path not in seen:
                seen.add(path)
                yield path
            continue
        if not path.is_dir():
            continue
        for file in _walk(path, settings, []):
            if file not in seen:
                seen.add(file)
                yield file


def _walk(directory: Path, settings: Settings, ignores: list[GitIgnore]) -> Iterator[Path]:
    own = GitIgnore.load(directory)
    if own is not None:
        ignores = [*ignores, own]
    try:
        entries = sorted(os.scandir(directory), key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        path = Path(entry.path)
        is_dir = entry.is_dir(follow_symlinks=False)
        if entry.name.startswith(".") and entry.name not in (".", ".."):
            continue
        if _ignored(path, is_dir, ignores) or settings.is_excluded(path if not is_dir else path / "_"):
            continue
        if is_dir:
            yield from _walk(path, settings, ignores)
        elif path.suffix in SUFFIXES and entry.is_file():
            yield path


def _ignored(path: Path, is_dir: bool, ignores: list[GitIgnore]) -> bool:
    verdict = False
    for ignore in ignores:
        result = ignore.ignored(path, is_dir)
        if result is not None:
            verdict = result
    return verdict
