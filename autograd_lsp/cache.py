"""The CLI's content-hashed result cache (like ruff's): unchanged files are not analysed again.

An entry is valid for the same file content, the same settings, the same autograd-lsp code, and the same
versions of the other workspace modules jedi consulted for it (helpers imported from them).
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from . import __version__
from .findings import Finding, finding_from_dict, finding_to_dict

CACHE_DIR_NAME = ".autograd-lsp-cache"


def _code_fingerprint() -> str:
    """Changes whenever any module of the package changes (a development install edits them in place)."""
    package = Path(__file__).resolve().parent
    digest = hashlib.blake2b(__version__.encode(), digest_size=12)
    for path in sorted(package.rglob("*.py")):
        stat = path.stat()
        digest.update(f"{path.relative_to(package)}:{stat.st_mtime_ns}:{stat.st_size};".encode())
    return digest.hexdigest()


def _stat_key(path: Path) -> list | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return [stat.st_mtime_ns, stat.st_size]


class Cache:
    def __init__(self, root: Path, settings_key: str):
        self.directory = Path(root) / CACHE_DIR_NAME / _code_fingerprint()
        self.settings_key = settings_key
        self.hits = 0

    def _entry(self, path: Path) -> Path:
        return self.directory / (hashlib.blake2b(str(Path(path).resolve()).encode(), digest_size=16).hexdigest() + ".json")

    @staticmethod
    def content_hash(text: str) -> str:
        return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()

    def get(self, path: Path, text: str) -> list[Finding] | None:
        try:
            data = json.loads(self._entry(path).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if data.get("content") != self.content_hash(text) or data.get("settings") != self.settings_key:
            return None
        for dep, key in data.get("deps", []):
            if _stat_key(Path(dep)) != key:
                return None
        self.hits += 1
        return [finding_from_dict(item) for item in data["findings"]]

    def put(self, path: Path, text: str, findings: list[Finding], deps: set[Path] = frozenset()) -> None:
        entry = {
            "content": self.content_hash(text),
            "settings": self.settings_key,
            "deps": [[str(dep), _stat_key(dep)] for dep in sorted(deps)],
            "findings": [finding_to_dict(f) for f in findings],
        }
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            marker = self.directory.parent / ".gitignore"
            if not marker.exists():
                marker.write_text("# created by autograd-lsp\n*\n", encoding="utf-8")
            target = self._entry(path)
            temporary = target.with_suffix(f".{os.getpid()}.tmp")
            temporary.write_text(json.dumps(entry), encoding="utf-8")
            os.replace(temporary, target)
        except OSError:
            pass  # a read-only tree just runs uncached
