"""Settings shared by the CLI and the server: rule selection, severities, excludes, pyproject loading."""
from __future__ import annotations

import fnmatch
import re
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePath
from typing import Iterable

from .findings import Severity
from .rules import ALL_RULES, BY_CODE, BY_NAME, SYNTAX_ERROR_CODE

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]


class ConfigError(Exception):
    """An invalid setting; the message names the key and the bad value."""


def expand_selector(selector: str, key: str = "select") -> set[str]:
    """Codes named by a selector: a code (AG001), a name (inplace-on-leaf), a prefix (AG0) or ALL."""
    token = selector.strip()
    if not token:
        return set()
    upper = token.upper()
    if upper == "ALL":
        return {rule.code for rule in ALL_RULES}
    if upper in BY_CODE or upper == SYNTAX_ERROR_CODE:
        return {upper}
    if token.lower() in BY_NAME:
        return {BY_NAME[token.lower()].code}
    matched = {rule.code for rule in ALL_RULES if rule.code.startswith(upper)}
    if upper.startswith("AG") and matched:
        return matched
    raise ConfigError(f"{key}: unknown rule {token!r} (expected a code like AG001, a name like inplace-on-leaf, a prefix like AG00, or ALL)")


def expand_selectors(selectors: Iterable[str], key: str) -> set[str]:
    codes: set[str] = set()
    for selector in selectors:
        codes |= expand_selector(selector, key)
    return codes


DEFAULT_EXCLUDES = (".git", ".hg", ".svn", ".venv", "venv", "env", ".env", "build", "dist", "node_modules",
                    "__pycache__", ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".ipynb_checkpoints", "site-packages")


@dataclass(frozen=True)
class Settings:
    select: frozenset[str] = frozenset(rule.code for rule in ALL_RULES)
    severity: dict = field(default_factory=dict)  # code -> Severity overrides
    per_file_ignores: tuple[tuple[str, frozenset[str]], ...] = ()  # (glob, codes)
    exclude: tuple[str, ...] = ()
    root: Path | None = None  # where pyproject.toml was found; globs are relative to it
    warnings: tuple[str, ...] = ()  # configuration that is not an error but is not read either (a misspelt table)

    def enabled(self, code: str, path: str | None = None) -> bool:
        if code == SYNTAX_ERROR_CODE:
            return True
        if code not in self.select:
            return False
        if path and self.per_file_ignores:
            relative = self._relative(path)
            for pattern, codes in self.per_file_ignores:
                if code in codes and _glob_match(relative, pattern):
                    return False
        return True

    def severity_of(self, code: str, default: Severity) -> Severity:
        return self.severity.get(code, default)

    def is_excluded(self, path: Path) -> bool:
        if any(part in DEFAULT_EXCLUDES for part in path.parts[:-1]) or path.name in DEFAULT_EXCLUDES:
            return True
        if not self.exclude:
            return False  # (no pattern to match: the relative path, two resolve()s, is not needed)
        relative = self._relative(str(path))
        return any(_glob_match(relative, pattern) for pattern in self.exclude)

    def _relative(self, path: str) -> str:
        if self.root is not None:
            try:
                return Path(path).resolve().relative_to(self.root.resolve()).as_posix()
            except ValueError:
                pass
        return PurePath(path).as_posix()

    def with_selection(self, select=None, ignore=(), extend_select=()) -> "Settings":
        """Apply CLI-style overrides on top of these settings."""
        chosen = set(self.select) if select is None else expand_selectors(select, "select")
        chosen |= expand_selectors(extend_select, "extend-select")
        chosen -= expand_selectors(ignore, "ignore")
        return replace(self, select=frozenset(chosen))


def _glob_match(relative: str, pattern: str) -> bool:
    pattern = pattern.rstrip("/")
    if fnmatch.fnmatch(relative, pattern):
        return True
    # A bare name ("tests", "legacy_*.py") matches any path component, as ruff and .gitignore do.
    if "/" not in pattern:
        return any(fnmatch.fnmatch(part, pattern) for part in PurePath(relative).parts)
    return fnmatch.fnmatch(relative, pattern + "/*")


def _string_list(table: dict, key: str) -> list[str]:
    value = table.get(key, [])
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"[tool.autograd-lsp] {key}: expected a list of strings, got {value!r}")
    return value


KNOWN_KEYS = {"select", "ignore", "extend-select", "per-file-ignores", "exclude", "extend-exclude", "severity"}


def settings_from_table(table: dict, root: Path | None = None, origin: str = "[tool.autograd-lsp]") -> Settings:
    """Settings from a `[tool.autograd-lsp]` table, or the server's initializationOptions (same keys)."""
    if not isinstance(table, dict):
        raise ConfigError(f"{origin}: expected a table, got {table!r}")
    unknown = sorted(set(table) - KNOWN_KEYS - {k.replace("-", "_") for k in KNOWN_KEYS})
    if unknown:
        raise ConfigError(f"{origin}: unknown key {unknown[0]!r} (known: {', '.join(sorted(KNOWN_KEYS))})")
    get = lambda key: table.get(key, table.get(key.replace("-", "_")))  # noqa: E731 - both spellings
    normalised = {key: get(key) for key in KNOWN_KEYS if get(key) is not None}
    select = _string_list(normalised, "select") if "select" in normalised else None
    settings = Settings(root=root).with_selection(
        select=select,
        ignore=_string_list(normalised, "ignore"),
        extend_select=_string_list(normalised, "extend-select"),
    )
    per_file = normalised.get("per-file-ignores", {})
    if not isinstance(per_file, dict):
        raise ConfigError(f"{origin} per-file-ignores: expected a table of glob = [codes], got {per_file!r}")
    per_file_ignores = tuple(
        (pattern, frozenset(expand_selectors(_string_list(per_file, pattern), f"per-file-ignores.{pattern}")))
        for pattern in per_file
    )
    severity_table = normalised.get("severity", {})
    if not isinstance(severity_table, dict):
        raise ConfigError(f"{origin} severity: expected a table of code = \"error\"|\"warning\"|\"info\"")
    severity = {}
    for selector, level in severity_table.items():
        try:
            parsed = Severity(str(level).lower())
        except ValueError:
            raise ConfigError(f"{origin} severity.{selector}: {level!r} is not one of error, warning, info") from None
        for code in expand_selector(selector, f"severity.{selector}"):
            severity[code] = parsed
    exclude = tuple(_string_list(normalised, "exclude") + _string_list(normalised, "extend-exclude"))
    return replace(settings, per_file_ignores=per_file_ignores, severity=severity, exclude=exclude)


def find_pyproject(start: Path) -> Path | None:
    start = start.resolve()
    for directory in [start, *start.parents] if start.is_dir() else start.parents:
        candidate = directory / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def load_settings(start: Path, config_file: Path | None = None) -> Settings:
    """Settings from the nearest pyproject.toml with a [tool.autograd-lsp] table, else defaults."""
    path = config_file or find_pyproject(start)
    if path is None:
        return Settings()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise ConfigError(f"{path}: cannot read configuration: {error}") from None
    tools = data.get("tool", {}) if isinstance(data.get("tool"), dict) else {}
    warnings = tuple(f"{path}: [tool.{name}] is not read: the table is [tool.autograd-lsp] (with a hyphen)"
                     for name in tools if name != "autograd-lsp" and re.sub(r"[-_.\s]", "", name.lower()) == "autogradlsp")
    table = tools.get("autograd-lsp")
    if table is None:
        return Settings(root=path.parent, warnings=warnings)
    settings = settings_from_table(table, root=path.parent, origin=f"{path} [tool.autograd-lsp]")
    return replace(settings, warnings=warnings)
