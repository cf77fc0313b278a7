"""Settings: the client's options (section `autogradLsp`), pyproject.toml per directory, and how the server
takes in a change of either. Options are parsed once into a typed object; invalid ones produce a message and
their defaults, never a crash."""
from __future__ import annotations

import asyncio
from dataclasses import dataclass, field, replace
from pathlib import Path

from lsprotocol import types

from ..config import ConfigError, Settings, expand_selector, expand_selectors, find_pyproject, load_settings
from ..findings import Severity

SECTION = "autogradLsp"
DEVICES = ("cpu", "cuda")
CLIENT_KEYS = {"select", "ignore", "extendSelect", "extend-select", "extend_select", "severity", "python", "confirm",
               "confirm.enabled", "confirm.timeout", "confirm.device", "workspaceDiagnostics", "debounce", "crossModule",
               "interpreter", "trace", "trace.server"}  # the VS Code extension's own keys: an alias and a client-side one


@dataclass(frozen=True)
class ClientOptions:
    """What the editor can set (section `autogradLsp`); the rule options layer on top of pyproject.toml."""

    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()
    severity: dict = field(default_factory=dict)  # code -> Severity
    python: str | None = None  # interpreter for runtime confirmation (None: the server's own)
    confirm_enabled: bool = True
    confirm_timeout: float = 30.0
    confirm_device: str = "cpu"
    workspace_diagnostics: bool = False  # answer workspace/diagnostic for every file, not only open ones
    debounce_ms: int = 50
    cross_module: bool = True  # resolve workspace imports with jedi in the background

    def apply(self, base: Settings) -> Settings:
        settings = base.with_selection(select=self.select, ignore=self.ignore, extend_select=self.extend_select)
        if self.severity:
            settings = replace(settings, severity={**settings.severity, **self.severity})
        return settings


def unwrap(raw) -> object:
    """initializationOptions / didChangeConfiguration payloads come as `{autogradLsp: {...}}`, `{settings: ...}` or bare."""
    if isinstance(raw, dict):
        if SECTION in raw:
            return raw[SECTION]
        if "settings" in raw and isinstance(raw["settings"], dict) and set(raw) <= {"settings"}:
            return unwrap(raw["settings"])
    return raw


def parse_client_options(raw) -> tuple[ClientOptions, list[str]]:
    """Options from the client's settings object; each invalid entry is reported and left at its default."""
    raw = unwrap(raw)
    if raw is None:
        return ClientOptions(), []
    if not isinstance(raw, dict):
        return ClientOptions(), [f"{SECTION}: expected an object, got {type(raw).__name__}"]
    problems: list[str] = []
    values: dict = {}
    flat = dict(raw)
    confirm = flat.pop("confirm", None)
    if isinstance(confirm, dict):
        for key, value in confirm.items():
            flat[f"confirm.{key}"] = value
    elif confirm is not None:
        problems.append(f"{SECTION}.confirm: expected an object like {{\"enabled\": true}}, got {confirm!r}")
    for key in sorted(set(flat) - CLIENT_KEYS):
        problems.append(f"{SECTION}: unknown setting {key!r}")

    def selectors(key: str) -> tuple[str, ...] | None:
        value = flat.get(key)
        if value is None:
            return None
        if isinstance(value, str):
            value = [part.strip() for part in value.split(",") if part.strip()]
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            problems.append(f"{SECTION}.{key}: expected a list of rule codes, got {value!r}")
            return None
        try:
            expand_selectors(value, f"{SECTION}.{key}")
        except ConfigError as error:
            problems.append(str(error))
            return None
        return tuple(value)

    select = selectors("select")
    if select is not None:
        values["select"] = select
    for key, name in (("ignore", "ignore"), ("extendSelect", "extend_select"), ("extend-select", "extend_select"), ("extend_select", "extend_select")):
        chosen = selectors(key)
        if chosen is not None:
            values[name] = chosen

    severity = flat.get("severity")
    if severity is not None:
        if not isinstance(severity, dict):
            problems.append(f"{SECTION}.severity: expected an object like {{\"AG001\": \"warning\"}}, got {severity!r}")
        else:
            parsed = {}
            for selector, level in severity.items():
                try:
                    level_value = Severity(str(level).lower())
                    for code in expand_selector(str(selector), f"{SECTION}.severity.{selector}"):
                        parsed[code] = level_value
                except ValueError:
                    problems.append(f"{SECTION}.severity.{selector}: {level!r} is not one of error, warning, info")
                except ConfigError as error:
                    problems.append(str(error))
            values["severity"] = parsed

    python = flat.get("python")
    if python is None or python == "":
        python = flat.get("interpreter")
    if python is not None:
        if isinstance(python, str) and python.strip():
            values["python"] = python.strip()
        elif python != "":
            problems.append(f"{SECTION}.python: expected the path of a Python interpreter, got {python!r}")

    def boolean(key: str, name: str):
        value = flat.get(key)
        if value is None:
            return
        if isinstance(value, bool):
            values[name] = value
        else:
            problems.append(f"{SECTION}.{key}: expected true or false, got {value!r}")

    boolean("confirm.enabled", "confirm_enabled")
    boolean("workspaceDiagnostics", "workspace_diagnostics")
    boolean("crossModule", "cross_module")

    timeout = flat.get("confirm.timeout")
    if timeout is not None:
        if isinstance(timeout, (int, float)) and not isinstance(timeout, bool) and 0 < timeout <= 3600:
            values["confirm_timeout"] = float(timeout)
        else:
            problems.append(f"{SECTION}.confirm.timeout: expected seconds between 0 and 3600, got {timeout!r}")
    device = flat.get("confirm.device")
    if device is not None:
        if isinstance(device, str) and device.lower() in DEVICES:
            values["confirm_device"] = device.lower()
        else:
            problems.append(f"{SECTION}.confirm.device: expected one of {', '.join(DEVICES)}, got {device!r}")
    debounce = flat.get("debounce")
    if debounce is not None:
        if isinstance(debounce, int) and not isinstance(debounce, bool) and 0 <= debounce <= 2000:
            values["debounce_ms"] = debounce
        else:
            problems.append(f"{SECTION}.debounce: expected milliseconds between 0 and 2000, got {debounce!r}")
    return ClientOptions(**values), problems


class ProjectSettings:
    """pyproject.toml `[tool.autograd-lsp]` per directory, cached until a pyproject.toml changes."""

    def __init__(self):
        self._cache: dict[Path, Settings] = {}
        self.problems: list[str] = []  # errors not yet shown to the user

    def clear(self) -> None:
        self._cache.clear()

    def for_path(self, path: str | None, root: str | None) -> Settings:
        start = Path(path).parent if path else (Path(root) if root else None)
        if start is None:
            return Settings()
        if start in self._cache:
            return self._cache[start]
        try:
            settings = load_settings(start if start.exists() else Path(root or "."))
        except ConfigError as error:
            where = find_pyproject(start) if start.exists() else None
            message = str(error) if where is None or str(where) in str(error) else f"{where}: {error}"
            self.problems.append(f"{message} — using the default settings")
            settings = Settings()
        # not errors, but configuration that is not read (a misspelt table): say so once, like an error
        self.problems.extend(settings.warnings)
        self._cache[start] = settings
        return settings


class SettingsMixin:
    """The server's side of settings: options pushed or pulled from the client, per-file effective settings,
    and re-analysis of every open unit when either changes."""

    def apply_options(self, raw, origin: str) -> bool:
        options, problems = parse_client_options(raw)
        if problems:
            self.show_message(f"autograd-lsp: invalid {origin}: " + "; ".join(problems) + " — using the defaults for those",
                              types.MessageType.Warning)
        changed = options != self.options
        self.options = options
        self.options_seq += 1
        return changed

    def settings_for(self, path: str | None):
        base = self.project.for_path(path, self.root)
        for problem in self.project.problems:
            self.show_message(f"autograd-lsp: {problem}", types.MessageType.Warning)
        self.project.problems.clear()
        try:
            return self.options.apply(base)
        except Exception as error:  # validated already; a crash here must still not stop analysis
            self.log_message(f"settings: {error}", types.MessageType.Warning)
            return base

    async def pull_configuration(self):
        if not self.client_has("workspace", "configuration"):
            return
        seq = self.options_seq
        try:
            items = await asyncio.wait_for(self.workspace_configuration_async(types.ConfigurationParams(
                items=[types.ConfigurationItem(section=SECTION, scope_uri=self.workspace.root_uri)])), 10)
        except Exception as error:
            self.log_message(f"workspace/configuration failed: {error}", types.MessageType.Warning)
            return
        if seq != self.options_seq:
            return  # settings pushed while we asked are newer than the answer
        value = items[0] if items else None
        if value is None or value == {}:
            value = self.init_options_raw  # the client has nothing under our section: keep initializationOptions
        if self.apply_options(value, f"{SECTION} settings"):
            self.settings_changed()

    async def configuration_changed(self, settings):
        """didChangeConfiguration: settings pushed in the notification, or (empty push) pulled from the client."""
        if isinstance(settings, dict) and (SECTION in settings or set(settings) & {"select", "ignore", "severity", "confirm", "python"}):
            if self.apply_options(unwrap(settings), f"{SECTION} settings"):
                self.settings_changed()
            return
        await self.pull_configuration()

    def settings_changed(self):
        self.settings_generation += 1
        for unit in list(self.units.values()):
            unit.refresh_needed = True
            self.schedule(unit, 0)
        if self.workspace_changed is not None:
            self.workspace_changed.set()
