"""Names the syntax alone cannot resolve: helpers and modules imported from other files of the workspace.

jedi finds *where* an imported name is defined; our own walker then summarises that definition (what a
helper returns, whether a class is an nn.Module). Both steps are cached: jedi scripts per text, other
modules' models per (path, mtime, size). Only definitions inside the workspace root are followed.
"""
from __future__ import annotations

import ast
import hashlib
import logging
import threading
from pathlib import Path

from ..source import Source, SourceError, read_source
from .model import ClassInfo, FunctionInfo

log = logging.getLogger(__name__)

_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")


class JediResolver:
    def __init__(self, root: Path, max_depth: int = 2):
        self.root = Path(root).resolve()
        self.max_depth = max_depth
        self._project = None
        self._scripts: dict = {}  # (path, text hash) -> jedi.Script; a few, since resolving a helper's module nests scripts
        self._models: dict = {}
        self._gotos: dict = {}
        self._depth = 0
        self._lock = threading.RLock()
        self.queries = 0  # jedi goto calls made (for tests and benchmarks)
        self.touched: set[Path] = set()  # other modules consulted since the last reset (cache dependencies)

    @staticmethod
    def project_root(path: Path) -> Path:
        path = Path(path).resolve()
        start = path if path.is_dir() else path.parent
        for directory in [start, *start.parents]:
            if any((directory / marker).exists() for marker in _MARKERS):
                return directory
        return start

    def _jedi_project(self):
        if self._project is None:
            import jedi

            self._project = jedi.Project(self.root, added_sys_path=[str(self.root)], smart_sys_path=True, load_unsafe_extensions=False)
        return self._project

    def _script_for(self, source: Source):
        import jedi

        key = (source.path, hashlib.blake2b(source.text.encode("utf-8", "surrogatepass"), digest_size=16).digest())
        script = self._scripts.pop(key, None)
        if script is None:
            # One slot thrashed: summarising another module (nested) replaced the caller's script, and every
            # new Script starts a fresh inference state. Keep the most recent few, newest last.
            script = jedi.Script(code=source.text, path=source.path, project=self._jedi_project())
            while len(self._scripts) >= 8:
                self._scripts.pop(next(iter(self._scripts)))
        self._scripts[key] = script
        return script, key

    def resolve(self, source: Source, node: ast.expr):
        """The FunctionInfo/ClassInfo an imported name refers to, or None."""
        if source.path is None or self._depth >= self.max_depth:
            return None
        with self._lock:
            try:
                return self._resolve(source, node)
            except Exception as error:  # jedi on half-typed code can fail in many ways: unknown, not fatal
                log.debug("jedi could not resolve %s: %s", ast.dump(node)[:80], error)
                return None

    def _resolve(self, source: Source, node: ast.expr):
        target = node
        line = target.end_lineno or target.lineno
        # jedi columns are characters; a Name/Attribute ends on its identifier
        text_line = source.line_text(line)
        end_col = len(text_line.encode("utf-8")[: target.end_col_offset].decode("utf-8", "replace"))
        script, key = self._script_for(source)
        cache_key = (key, line, end_col)
        if cache_key in self._gotos:
            location = self._gotos[cache_key]
        else:
            self.queries += 1
            names = script.goto(line, max(end_col - 1, 0), follow_imports=True)
            location = None
            for name in names:
                path = name.module_path
                if path is None or name.type not in ("function", "class") or not self._inside(Path(path)):
                    continue
                location = (Path(path), name.line, name.name, name.type)
                break
            self._gotos[cache_key] = location
        if location is None:
            return None
        path, def_line, def_name, kind = location
        model = self._model(path)
        if model is None:
            return None
        if kind == "class":
            info = model.classes.get(def_name)
            return info if isinstance(info, ClassInfo) else None
        for node_, info in model.functions.items():
            if info.name == def_name and node_.lineno <= def_line <= (node_.end_lineno or node_.lineno) and info.cls is None:
                return info
        return None

    def _inside(self, path: Path) -> bool:
        try:
            resolved = path.resolve()
            resolved.relative_to(self.root)
        except (ValueError, OSError):
            return False
        return "site-packages" not in resolved.parts and ".venv" not in resolved.parts

    def _model(self, path: Path):
        from .model import build_model

        try:
            stat = path.stat()
        except OSError:
            return None
        key = (str(path), stat.st_mtime_ns, stat.st_size)
        self.touched.add(path)
        if key in self._models:
            return self._models[key]
        self._models[key] = None  # guards import cycles
        try:
            source = read_source(path)
            tree = ast.parse(source.text)
        except (SourceError, SyntaxError, ValueError, RecursionError):
            return None
        self._depth += 1
        try:
            model = build_model(tree, source, resolver=self)
        finally:
            self._depth -= 1
        self._models[key] = model
        return model
