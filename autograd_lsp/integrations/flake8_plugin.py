"""`flake8 --select AG`: the findings of `autograd-lsp check`, as flake8 errors, for CI jobs that already run flake8.

Registered in pyproject.toml under `flake8.extension` with the code prefix `AG`. The same pipeline as `check`:
the nearest pyproject.toml's [tool.autograd-lsp] table, cross-module resolution with jedi, `# noqa`; the same
lines, columns and messages (flake8 prints columns 1-based, as `check` does). Which files are read is flake8's
choice (its --exclude), as it is for every plugin."""
from __future__ import annotations

import ast
from pathlib import Path

from .. import __version__
from ..checker import check_source
from ..config import Settings, load_settings
from ..source import Source

_SETTINGS: dict[Path, Settings] = {}
_RESOLVERS: dict = {}


def _settings(path: Path | None) -> Settings:
    directory = (path.parent if path is not None else Path(".")).resolve()
    if directory not in _SETTINGS:
        _SETTINGS[directory] = load_settings(directory)  # a ConfigError reaches flake8, which names it and fails
    return _SETTINGS[directory]


def _resolver(path: Path | None):
    from ..analysis.crossmodule import JediResolver

    root = JediResolver.project_root(path if path is not None else Path("."))
    if root not in _RESOLVERS:
        _RESOLVERS[root] = JediResolver(root)
    resolver = _RESOLVERS[root]
    resolver.trim()  # between two files, never during one
    return resolver


class Plugin:
    """One instance per file. flake8's tree goes unused: the checker parses the text itself, as `check` does."""

    name = "autograd-lsp"
    version = __version__

    def __init__(self, tree: ast.AST, filename: str, lines: list[str]) -> None:
        self.filename = filename
        self.lines = lines

    def run(self):
        path = None if self.filename in ("-", "stdin") else Path(self.filename)
        source = Source("".join(self.lines), str(path) if path is not None else None)
        result = check_source(source, _settings(path), resolver=_resolver(path))
        if result.model is not None:
            result.model.release()
        for finding in result.findings:
            yield finding.span.line, finding.span.col, f"{finding.code} {finding.message}", type(self)
