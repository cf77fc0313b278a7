"""Names the syntax alone cannot resolve: helpers and modules imported from other files of the workspace.

jedi finds *where* an imported name is defined; our own walker then summarises that definition (what a
helper returns, whether a class is an nn.Module). Both steps are cached: jedi scripts per text, other
modules' models per (path, mtime, size). Only definitions inside the workspace root are followed.
"""
from __future__ import annotations

import ast
import gc
import hashlib
import logging
import os
import threading
import time
from collections import OrderedDict
from contextlib import contextmanager
from pathlib import Path

from ..source import Source, SourceError, read_source
from .model import ClassInfo, FunctionInfo
from . import syntax

log = logging.getLogger(__name__)

class Stats:
    """Cheap counters of one process's cross-module work (`autograd-lsp check --stats` prints them): how often the
    direct lookup answered, how often jedi was asked, and the time spent inside jedi."""

    FIELDS = ("direct", "direct_none", "jedi_scripts", "jedi_queries", "jedi_cached", "jedi_skipped", "jedi_s", "models",
              "trees_reused")  # (the last: a consulted or checked file's tree taken from JediResolver._trees, not parsed)

    def __init__(self):
        for name in self.FIELDS:
            setattr(self, name, 0)

    def snapshot(self) -> tuple:
        return tuple(getattr(self, name) for name in self.FIELDS)


STATS = Stats()

_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")
MAX_MODELS = 128  # consulted modules kept by one resolver (see JediResolver.trim)
MAX_MODEL_LINES = 100_000  # ... and their lines: a tree is most of a model's memory, and some packages' modules are huge
# Trees parsed in this run, kept (least recently used first out) past their models: without them a run over a package
# parsed again ~45% of its lines, modules consulted after they were checked or after a trim (~1.2 KB per line: the
# bound is ~120 MB; peak RSS did not grow on the benchmark corpus, whose models held those trees before). The bound
# is the run's: `check --jobs N` workers keep MAX_TREE_LINES // N each (cli._start_worker).
MAX_TREE_LINES = 100_000
# jedi is the rare exception (the direct lookup answers almost every import), and slow on large files: parso parses
# ~10k lines/s. Past these, a name the direct lookup left ambiguous stays unknown: silence, not slowness.
JEDI_BUDGET_S = 0.5  # jedi time per checked file (its Script and all its queries)
JEDI_MAX_LINES = 4000  # a file whose parse alone would take most of that budget is never handed to jedi
_ROOTS: dict = {}  # directory -> holds a project marker (asked for every file of a run, mostly the same few)
_PROJECT_ROOTS: dict = {}  # path as given -> its project root


def _above_packages(directory: Path) -> Path:
    """With no project marker above: the directory holding the outermost package `directory` is in (`site/monai` for
    `site/monai/networks/nets`), where Python itself would import it from; `directory` when it is no package."""
    while (directory / "__init__.py").is_file() and directory.parent != directory:
        directory = directory.parent
    return directory


def _is_root(directory: Path) -> bool:
    found = _ROOTS.get(directory)
    if found is None:
        if len(_ROOTS) > 4096:
            _ROOTS.clear()  # a long-lived server: markers can appear; forget now and then
        found = _ROOTS[directory] = any((directory / marker).exists() for marker in _MARKERS)
    return found


class JediResolver:

    def __init__(self, root: Path, max_depth: int = 2, max_models: int = MAX_MODELS, max_tree_lines: int = MAX_TREE_LINES):
        self.root = Path(root).resolve()
        self.max_depth = max_depth
        self.max_models = max_models
        self.max_tree_lines = max_tree_lines
        # resolved path -> (source, tree, lines, (mtime, size) when read by _model), most recently used last
        self._trees: OrderedDict = OrderedDict()
        self._tree_lines = 0
        self._project = None
        self._scripts: dict = {}  # (path, text hash) -> jedi.Script; a few, since resolving a helper's module nests scripts
        self._models: dict = {}
        self._by_file: dict = {}  # resolved path -> key of its model in _models (for parsed())
        self._model_lines = 0  # lines of the modules in _models
        self._gotos: dict = {}
        self._spent: dict = {}  # (path, text hash) of a checked file -> seconds jedi took for it (JEDI_BUDGET_S)
        self._depth = 0
        self._lock = threading.RLock()
        self.queries = 0  # jedi goto calls made (for tests and benchmarks)
        self._fs: dict = {}  # file-system answers (module files, resolved paths) for this run
        self._stale_fs = False  # forget_files() was called: clear _fs at the next lookup
        self.touched: set[Path] = set()  # other modules consulted since the last reset (cache dependencies)
        # path -> its model's key, while no file can change (a `check` run before its fixes): each file is stat()ed once
        self.stat_memo: dict | None = None
        self._starring: set = set()  # (module, name) looked up through star imports right now (_through_stars)
        self._direct_memo: tuple = (None, {})  # (the source being checked, its names' direct answers: _direct_for)

    @property
    def depth(self) -> int:
        """How many modules deep the current walk is: 0 for the file being checked, 1+ for modules it imports."""
        return self._depth

    @contextmanager
    def at_depth(self, depth: int):
        """Walk a consulted module's function later, when a caller first needs it, as deep as the module is.
        Yields False, and nothing is walked (the summary stays unknown), when another thread is resolving: the
        language server's fast pass must never wait for jedi."""
        if not self._lock.acquire(blocking=False):
            yield False
            return
        saved, self._depth = self._depth, depth
        try:
            yield True
        finally:
            self._depth = saved
            self._lock.release()

    def complete(self, definition) -> None:
        """Walk everything of a resolved function or class that a caller may need, now, so that a later analysis
        running on another thread finds the summaries ready."""
        if isinstance(definition, ClassInfo):
            functions = list(definition.methods.values())
        elif isinstance(definition, FunctionInfo):
            functions = [definition]
        else:
            return
        for info in functions:
            if not info.walked and info.owner is not None:
                info.owner.walk_for_caller(info)

    @staticmethod
    def project_root(path: Path) -> Path:
        path = Path(path)
        if path.suffix in (".py", ".pyi", ".ipynb"):
            path = path.parent  # a file: its directory decides, the same for all its siblings
        key = str(path)
        found = _PROJECT_ROOTS.get(key)
        if found is None:
            resolved = path.resolve()
            start = resolved if resolved.is_dir() else resolved.parent
            found = next((directory for directory in [start, *start.parents] if _is_root(directory)), None) or _above_packages(start)
            if len(_PROJECT_ROOTS) > 4096:
                _PROJECT_ROOTS.clear()
            _PROJECT_ROOTS[key] = found
        return found

    def _jedi_project(self):
        if self._project is None:
            import jedi

            refuse_compiled_torch()
            self._project = jedi.Project(self.root, added_sys_path=[str(self.root)], smart_sys_path=True, load_unsafe_extensions=False)
        return self._project

    def _script_for(self, source: Source, key=None):
        import jedi

        key = key or (source.path, _digest(source.text))
        script = self._scripts.pop(key, None)
        if script is None:
            # One slot thrashed: summarising another module (nested) replaced the caller's script, and every
            # new Script starts a fresh inference state. Keep the most recent few, newest last.
            script = jedi.Script(code=source.text, path=source.path, project=self._jedi_project())
            STATS.jedi_scripts += 1
            while len(self._scripts) >= 8:
                self._scripts.pop(next(iter(self._scripts)))
        self._scripts[key] = script
        return script, key

    def resolve(self, source: Source, node: ast.expr, qualname: str | None = None):
        """The FunctionInfo/ClassInfo an imported name refers to, or None.

        `qualname` (what the import table says the name is, ".layers.Mlp" / "helpers.compose") allows a direct
        lookup: the module's file is found from the import alone and the top-level definition read from our own
        model of it, following re-exports (`from .mlp import Mlp` in a package's __init__). jedi is asked only
        when that does not give one unambiguous top-level def or class: parsing every importing file with jedi
        dominated the analysis time of large packages.
        """
        if source.path is None or self._depth >= self.max_depth:
            return None
        with self._lock:
            if self._stale_fs:
                self._stale_fs = False
                self._fs = {}
                self._direct_memo = (None, {})
            if qualname:
                found = self._direct_for(source, qualname)
                if found is _UNRESOLVABLE:
                    STATS.direct_none += 1
                    return None  # bound by an assignment, or not bound at all: jedi would find no def or class either
                if found is not None:
                    STATS.direct += 1
                    return found
            collecting = gc.isenabled()
            try:
                return self._resolve(source, node)
            except Exception as error:  # jedi on half-typed code can fail in many ways: unknown, not fatal
                log.debug("jedi could not resolve %s: %s", ast.dump(node)[:80], error)
                return None
            finally:
                if not collecting and gc.isenabled():
                    # parso's cache loads end with gc.enable() (parso/cache.py): the CLI's collector, off for a check
                    # (cli._quiet_gc), was on for the rest of the run after the first jedi query, rescanning every
                    # model and tree kept alive (~10-25% of a run over a package that asks jedi once)
                    gc.disable()

    # -- direct resolution (no jedi) ---------------------------------------------------------------------
    def _direct_for(self, source: Source, qualname: str):
        """_resolve_direct's answer for the file being checked, once per name: its every call of `helpers.f` asks.
        Remembered only while nothing can change it: a run whose files stay as they are (stat_memo), at depth 0
        (no module's summary is half-built), for the current file (its text decides whether sys.path is edited),
        with the modules it consulted replayed into `touched` (the cache's dependencies)."""
        if self.stat_memo is None or self._depth != 0:
            return self._direct(source, qualname)[0]
        if self._direct_memo[0] is not source:
            self._direct_memo = (source, {})
        memo = self._direct_memo[1]
        if qualname in memo:
            found, consulted = memo[qualname]
            self.touched |= consulted
            return found
        outer, self.touched = self.touched, set()
        try:
            found, sure = self._direct(source, qualname)
        finally:
            consulted, self.touched = self.touched, outer
            outer |= consulted
        if sure:  # (a failure is not remembered: a recursion limit depends on where the name was asked)
            memo[qualname] = (found, consulted)
        return found

    def _direct(self, source: Source, qualname: str) -> tuple:
        """(_resolve_direct's answer, whether it came without an error)."""
        try:
            return self._resolve_direct(Path(source.path), qualname, hops=0, text=source.text), True
        except (OSError, ValueError, RecursionError) as error:
            log.debug("direct resolution of %s failed: %s", qualname, error)
            return None, False

    def _module_file(self, base: Path, parts: list[str]) -> Path | None:
        # The same few directories are probed for every import of every file: remember the answers.
        key = ("module", base, tuple(parts))
        if key not in self._fs:
            self._fs[key] = self._find_module_file(base, parts)
        return self._fs[key]

    def _find_module_file(self, base: Path, parts: list[str]) -> Path | None:
        if not parts:
            candidate = base / "__init__.py"
            return candidate if candidate.is_file() else None
        for candidate in (base.joinpath(*parts[:-1], parts[-1] + ".py"), base.joinpath(*parts, "__init__.py")):
            if candidate.is_file() and self._inside(candidate):
                return candidate
        return None

    def _resolve_direct(self, importer: Path, qualname: str, hops: int, text: str | None = None):
        if hops > 4:
            return None
        level = len(qualname) - len(qualname.lstrip("."))
        parts = [part for part in qualname.lstrip(".").split(".") if part]
        if not parts:
            return None
        if level:
            base = importer.parent
            for _ in range(level - 1):
                base = base.parent
            roots = [base]
        else:
            roots = self._search_roots(importer)
        found_module = ambiguous = False
        for root in roots:
            found = self._direct_in(importer, root, parts, level, hops)
            if found is _NO_MODULE:
                continue
            found_module = True
            if found is _NOT_BOUND:
                continue
            if found is not None:
                return found
            ambiguous = True
            # ambiguous here: a nearer directory's module of the same name (`tensordict/tensordict.py` next to the
            # importer of `tensordict._td`) is no sys.path entry's answer; the next directory up may be sure
        if not level and hops and _installed(parts[0]):
            return _UNRESOLVABLE  # a workspace module re-exports a library's name (`from torch import Tensor`)
        if not ambiguous and (level or not ("sys.path" in text if text is not None else self._edits_sys_path(importer))):
            # no directory jedi searches holds the module: a library's name or no name at all, never a workspace def
            return _UNRESOLVABLE
        return None

    def _direct_in(self, importer: Path, root: Path, parts: list[str], level: int, hops: int):
        """What `parts` is below one search directory: a definition, _UNRESOLVABLE (sure: no def or class), None
        (ambiguous: let jedi decide), _NOT_BOUND (the module there binds nothing by that name) or _NO_MODULE (no
        prefix of it is a module there)."""
        # the longest prefix of `parts` that is a module; the one name after it is what the import binds
        for split in range(len(parts) - 1, -1 if level else 0, -1):  # an absolute name needs a module before it
            path = self._module_file(root, parts[:split])
            if path is None:
                continue
            if not level and self._resolved(path) == self._resolved(importer):
                # loggers/wandb.py importing `wandb.Artifact`: a module named like the library it wraps is not
                # what it imports from (it would import from itself); look further up
                return _NOT_BOUND
            if len(parts) - split == 1:
                return self._lookup(path, parts[-1], hops)
            # `Boxes.from_tensor`, `numpy.array` through a module's attribute: a method or a value's attribute,
            # never a top-level def or class (jedi's answer would be discarded as well)
            model = self._model(path)
            if model is None:
                return None
            if _binds_value_or_class(model, parts[split]):
                return _UNRESOLVABLE
            imported = model.imports.names.get(parts[split])
            if imported is not None:  # `Events.X` where a package's __init__ re-exports `Events`: follow it
                return self._resolve_direct(path, ".".join([imported, *parts[split + 1:]]), hops + 1)
            top, star, assigned = _summary(model)
            if not star and parts[split] not in assigned and not _binds_anything(top, parts[split]):
                # neither bound in the module nor a submodule of it (the longer prefixes were no module): a sibling
                # `gpytorch.py` of the importer is not the library `gpytorch.priors...` means; look further up
                return _NOT_BOUND
            return None
        return _NO_MODULE

    def _edits_sys_path(self, importer: Path) -> bool:
        """The importer changes sys.path (jedi follows `sys.path.append(...)`): a module may come from anywhere."""
        key = ("sys.path", importer)
        if key not in self._fs:
            try:
                self._fs[key] = "sys.path" in importer.read_text("utf-8", "replace")
            except OSError:
                self._fs[key] = True
        return self._fs[key]

    def _search_roots(self, importer: Path) -> list[Path]:
        """Where an absolute import of `importer` is looked for: its directory, those above it inside the root,
        the root's src/ (remembered per directory)."""
        here = self._resolved(importer).parent
        key = ("roots", here)
        if key not in self._fs:
            self._fs[key] = [here] + [parent for parent in here.parents if self._inside_dir(parent)] + [self.root / "src"]
        return self._fs[key]

    def _resolved(self, path: Path) -> Path:
        key = ("resolved", path)
        found = self._fs.get(key)
        if found is None:
            # A file's real path is its directory's (resolved once per directory: every file of a package asks)
            # with its own name, unless the file itself is a link: one lstat, not one per component.
            parent = path.parent
            if path.name in ("", ".", "..") or parent == path or os.path.islink(path):
                found = path.resolve()
            else:
                found = self._resolved(parent) / path.name
            self._fs[key] = found
        return found

    def _inside_dir(self, directory: Path) -> bool:
        key = ("inside", directory)
        if key not in self._fs:
            try:
                self._resolved(directory).relative_to(self.root)
                self._fs[key] = True
            except (ValueError, OSError):
                self._fs[key] = False
        return self._fs[key]

    def _lookup(self, path: Path, name: str, hops: int):
        model = self._model(path)
        if model is None:
            return None
        top, star, assigned_names = _summary(model)
        classes, functions = _top_definitions(model, top).get(name, ((), ()))
        assigned = name in assigned_names
        if len(classes) + len(functions) == 1 and not assigned:
            return classes[0] if classes else functions[0]
        if classes or functions:
            # several definitions (`@overload` stubs before the real def, a def re-bound by `f = wrap(f)`): jedi
            # answers with the last binding when it is unconditional; a conditional one is left to jedi
            last = _last_binding(model, name)
            if isinstance(last, (ast.Assign, ast.AnnAssign)):
                return _UNRESOLVABLE
            if last is None:
                last = _undecided_branch_def(model, name)
            return next((info for info in (*classes, *functions) if info.node is last), None)
        if assigned and not star:
            return _UNRESOLVABLE  # `Tensor = torch.Tensor`: a value, not a def or class
        imported = model.imports.names.get(name)
        if imported is not None:
            return self._resolve_direct(path, imported, hops + 1)
        if assigned:
            return None
        if not star:
            return _UNRESOLVABLE  # not bound in this module at all
        return self._through_stars(path, model, name, hops)

    def _through_stars(self, path: Path, model, name: str, hops: int):
        """`from .affwarp import *` in a package's __init__: the last star import that exports `name` binds it.
        A star-imported module that imports `name` back from this package while this lookup runs (torch_geometric's
        nn/glob.py: `from torch_geometric.nn import global_add_pool`, star-imported by nn/__init__) binds what the
        earlier star imports bound: _CYCLE, and the earlier ones are searched."""
        if hops > 6:
            return None
        key = (path, name)
        if key in self._starring:
            return _CYCLE
        self._starring.add(key)
        try:
            return self._through_stars_of(path, model, name, hops)
        finally:
            self._starring.discard(key)

    def _through_stars_of(self, path: Path, model, name: str, hops: int):
        stars = sorted((node for node in _summary(model)[0] if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names)),
                       key=lambda node: (node.lineno, node.col_offset), reverse=True)
        for node in stars:
            target = self._module_of(path, "." * node.level + (node.module or ""))
            if target is None:
                return None  # a library's names (`from torch import *`) or a module we cannot find: let jedi decide
            star_model = self._model(target)
            if star_model is None:
                return None
            exported = _exported(star_model)
            if exported is None:
                return None  # a computed __all__
            if (name not in exported) if exported is not True else name.startswith("_"):
                continue
            top, star, assigned = _summary(star_model)
            bound = (name in assigned or name in star_model.imports.names
                     or any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.name == name for n in top))
            if bound:
                found = self._lookup(target, name, hops + 1)
                if found is _CYCLE:
                    continue
                return found
            if star:
                found = self._through_stars(target, star_model, name, hops + 1)
                if found is not _UNRESOLVABLE and found is not _CYCLE:
                    return found
        return _UNRESOLVABLE

    def _module_of(self, importer: Path, qualname: str) -> Path | None:
        """The file of the module `qualname` (".affwarp", "pkg.sub") imported from `importer`, inside the workspace."""
        level = len(qualname) - len(qualname.lstrip("."))
        parts = [part for part in qualname.lstrip(".").split(".") if part]
        if level:
            base = importer.parent
            for _ in range(level - 1):
                base = base.parent
            return self._module_file(base, parts)
        if not parts:
            return None
        for root in self._search_roots(importer):
            found = self._module_file(root, parts)
            if found is not None:
                return found
        return None

    def _resolve(self, source: Source, node: ast.expr):
        target = node
        line = target.end_lineno or target.lineno
        # jedi columns are characters; a Name/Attribute ends on its identifier
        text_line = source.line_text(line)
        end_col = len(text_line.encode("utf-8")[: target.end_col_offset].decode("utf-8", "replace"))
        key = (source.path, _digest(source.text))
        cache_key = (key, line, end_col)
        if cache_key in self._gotos:
            STATS.jedi_cached += 1
            location = self._gotos[cache_key]
        elif self._spent.get(key, 0.0) >= JEDI_BUDGET_S or source.text.count("\n") > JEDI_MAX_LINES:
            STATS.jedi_skipped += 1
            return None
        else:
            started = time.perf_counter()
            try:
                script, _ = self._script_for(source, key)
                self.queries += 1
                STATS.jedi_queries += 1
                names = script.goto(line, max(end_col - 1, 0), follow_imports=True)
            finally:
                spent = time.perf_counter() - started
                STATS.jedi_s += spent
                self._spent[key] = self._spent.get(key, 0.0) + spent
                if len(self._spent) > 4096:
                    self._spent.clear()
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

    def workspace_module(self, path: str, top: str) -> bool:
        """walker.workspace_module, remembered per directory (every file of a package imports the same names)."""
        key = ("top", os.path.dirname(path), top)
        found = self._fs.get(key)
        if found is None:
            # walker.workspace_module's probes, each directory's answer kept: the files of sibling packages share
            # the directories above them, and a directory's real path is resolved once (_resolved)
            here = self._resolved(Path(path)).parent
            found = self._fs[key] = any(self._holds_module(root, top) for root in [here, *list(here.parents)[:3]])
        return found

    def _holds_module(self, root: Path, top: str) -> bool:
        key = ("holds", root, top)
        found = self._fs.get(key)
        if found is None:
            found = self._fs[key] = (root / f"{top}.py").is_file() or (root / top / "__init__.py").is_file() or (root / "src" / top).is_dir() \
                or namespace_package(root / top)
        return found

    def forget_files(self) -> None:
        """Files were created, moved or deleted: ask the file system again (the language server, on save). Takes
        effect at the next lookup: the caller (the server's event loop) must not wait for a jedi call to end."""
        self._stale_fs = True

    def parsed(self, source: Source):
        """The tree of a file about to be checked: the one already parsed when another file consulted it, if its
        text is the same (a large package consults most of its modules before it checks them), else a new one."""
        from ..checker import parse

        if source.path is None or source.cells is not None:
            return parse(source)
        with self._lock:
            try:
                resolved = self._resolved(Path(source.path))
            except OSError:
                return parse(source)
            model = self._models.get(self._by_file.get(resolved))
            if model is not None and model.source.text == source.text:
                return model.tree
            tree = self._tree(resolved, source.text)
            if tree is None:
                tree = parse(source)
                if isinstance(tree, ast.Module):
                    self._keep_tree(resolved, source, tree, None)
            return tree

    def _tree(self, resolved: Path, text: str) -> ast.Module | None:
        """The tree parsed from this file's very text earlier in the run, if it is still kept."""
        found = self._trees.get(resolved)
        if found is None or found[0].text != text:
            return None
        self._trees.move_to_end(resolved)
        STATS.trees_reused += 1
        return found[1]

    def _keep_tree(self, resolved: Path, source: Source, tree: ast.Module, signature: tuple | None) -> None:
        """Keep a parsed tree for later lookups (bounded by lines). Trees are never changed by an analysis (the
        server's incremental parse copies what an edit touches), and a kept tree keeps its nodes' ids unique."""
        lines = source.text.count("\n") + 1
        if lines > self.max_tree_lines:
            return
        old = self._trees.pop(resolved, None)
        if old is not None:
            self._tree_lines -= old[2]
        self._trees[resolved] = (source, tree, lines, signature)
        self._tree_lines += lines
        while self._tree_lines > self.max_tree_lines:
            _, (_, _, dropped, _) = self._trees.popitem(last=False)
            self._tree_lines -= dropped

    def trim(self) -> None:
        """Past `max_models` consulted modules (or MAX_MODEL_LINES of them), forget them all. Call it between two
        analyses, never during one.

        All at once, not the least recently used: summaries name the nodes of the graphs they saw by `id()`,
        across modules (a helper's summary holds ids of nodes in the helper it calls). A module released while a
        module that consulted it stays cached leaves ids of freed nodes behind, which the next trees parsed
        reuse: two unrelated graphs would look like one. A run over a large package consults hundreds of modules;
        parsing one again is cheap, and a module's tree is most of its model's memory."""
        with self._lock:
            if len(self._models) <= self.max_models and self._model_lines <= MAX_MODEL_LINES:
                return
            self.forget_models(keep_trees=True)

    def forget_models(self, keep_trees: bool = False) -> None:
        """Release every consulted module now (trim's way: all at once). The CLI calls it on the resolver of a
        project it has left, whose models (and kept trees) would otherwise stay for the rest of the run."""
        with self._lock:
            if not keep_trees:
                self._trees.clear()
                self._tree_lines = 0
            models, self._models, self._by_file, self._model_lines = self._models, {}, {}, 0
            self._direct_memo = (None, {})  # (its answers are these models' functions and classes)
            for model in models.values():
                if model is not None:
                    model.release()

    def _inside(self, path: Path) -> bool:
        try:
            resolved = self._resolved(path)  # (its directory's real path, resolved once for all its files)
            resolved.relative_to(self.root)
        except (ValueError, OSError):
            return False
        return "site-packages" not in resolved.parts and ".venv" not in resolved.parts

    def _model(self, path: Path):
        from .model import build_model

        memo = self.stat_memo
        key = memo.get(path) if memo is not None else None
        if key is None:
            try:
                stat = path.stat()
            except OSError:
                return None
            key = (str(path), stat.st_mtime_ns, stat.st_size)
            if memo is not None:
                memo[path] = key
        self.touched.add(path)
        if key in self._models:
            return self._models[key]
        self._models[key] = None  # guards import cycles
        STATS.models += 1
        try:
            resolved = self._resolved(path)
            kept = self._trees.get(resolved)
            if kept is not None and kept[3] == key[1:] and kept[0].path == str(path):
                source, tree = kept[0], kept[1]  # read and parsed by this run, unchanged since (same stat)
                self._trees.move_to_end(resolved)
                STATS.trees_reused += 1
            else:
                source = read_source(path)
                tree = self._tree(resolved, source.text)
                if tree is None:
                    tree = ast.parse(source.text)
                self._keep_tree(resolved, source, tree, key[1:])
        except (SourceError, SyntaxError, ValueError, RecursionError, OSError):
            return None
        self._depth += 1
        try:
            # Only the summaries (functions, classes) of another module are consulted: no events or expression
            # tables, and only the functions some caller needs are walked.
            model = build_model(tree, source, resolver=self, summary_only=True)
        finally:
            self._depth -= 1
        self._models[key] = model
        self._model_lines += source.text.count("\n")
        self._by_file[self._resolved(path)] = key
        return model


# jedi inspects compiled extension modules by importing them in a helper subprocess; for torch that costs
# ~1.7 s and 200 MiB, and the CLI and server must never load torch. We only ask jedi *where* workspace names
# are defined, which never needs torch's compiled parts, so those loads are refused. The hook is private to
# jedi (hence the `jedi<0.21` pin); tests/test_crossmodule.py checks it is in place.
NEVER_INSPECT = ("torch", "torchvision", "torchaudio", "triton")


def refuse_compiled_torch() -> None:
    from jedi.inference import imports

    original = imports._load_builtin_module
    if getattr(original, "refuses", None) == NEVER_INSPECT:
        return

    def load_builtin_module(inference_state, import_names, sys_path):
        if import_names and import_names[0] in NEVER_INSPECT:
            return None  # jedi treats it as an unimportable extension: unknown, not an error
        return original(inference_state, import_names, sys_path)

    load_builtin_module.refuses = NEVER_INSPECT
    imports._load_builtin_module = load_builtin_module


def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


_UNRESOLVABLE = object()  # the direct lookup is sure: no workspace def or class by that name
_NO_MODULE = object()  # no module of the name below one search directory
_NOT_BOUND = object()  # a module of the name's prefix is there, but it binds nothing by the next part's name
_CYCLE = object()  # a re-export leading back to a star lookup under way (_through_stars)


class _Ordered(list):
    """Top-level statements in source order, with a set for membership tests."""

    def __init__(self, items):
        super().__init__(items)
        self._members = {id(item) for item in items}

    def __contains__(self, item) -> bool:
        return id(item) in self._members
_INSTALLED: dict = {}


def namespace_package(directory: Path) -> bool:
    """A directory of modules or packages without an __init__.py that no installed library of its name hides: Python 3
    imports it as a namespace package (`from common.nets import QNet` with no common/__init__.py; `megatron/` holding
    only the packages `megatron/core/`, `megatron/training/`)."""
    return directory.is_dir() and (next(directory.glob("*.py"), None) is not None or next(directory.glob("*/__init__.py"), None)
                                   is not None) and not _installed(directory.name)


def _installed(top: str) -> bool:
    """`top` is an installed library (found on sys.path outside any workspace, without importing it)."""
    if top not in _INSTALLED:
        import importlib.util

        try:
            spec = importlib.util.find_spec(top)
        except (ImportError, ValueError):
            spec = None
        origin = getattr(spec, "origin", None) or ""
        locations = list(getattr(spec, "submodule_search_locations", None) or [])
        places = [origin, *locations]
        _INSTALLED[top] = spec is not None and (origin in ("built-in", "frozen") or
                                                any("site-packages" in place or "dist-packages" in place or "/lib/python" in place
                                                    for place in places))
    return _INSTALLED[top]


def _top_level(body) -> list:
    """Statements of a module body in source order, including those behind top-level `if`/`try` (TYPE_CHECKING,
    import fallbacks)."""
    out = []
    for node in body:
        out.append(node)
        if isinstance(node, ast.If):
            out.extend(_top_level(node.body + node.orelse))
        elif isinstance(node, ast.Try):
            out.extend(_top_level(node.body + [stmt for handler in node.handlers for stmt in handler.body] + node.orelse + node.finalbody))
    return out


def _summary(model):
    """(top-level statements, has a star import, names bound by assignment), computed once per module model."""
    summary = getattr(model, "_direct_summary", None)
    if summary is None:
        ordered = _top_level(model.tree.body)
        star = any(isinstance(node, ast.ImportFrom) and any(alias.name == "*" for alias in node.names) for node in ordered)
        assigned = set()
        for node in ordered:
            if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                assigned |= syntax.bound_names(node)
        summary = (_Ordered(ordered), star, assigned)
        model._direct_summary = summary
    return summary


def _top_definitions(model, top) -> dict:
    """name -> (its top-level classes, its top-level plain functions), in the order of model.classes and
    model.functions; rebuilt when either has grown (a lookup scanned both for every name it was asked)."""
    sizes = (len(model.classes), len(model.functions))
    index = model.__dict__.get("_top_definitions")
    if index is None or index[0] != sizes:
        table: dict = {}
        for info in model.classes.values():
            if info.node in top:
                table.setdefault(info.name, ([], []))[0].append(info)
        for info in model.functions.values():
            if info.cls is None and info.node in top:
                table.setdefault(info.name, ([], []))[1].append(info)
        index = model._top_definitions = (sizes, table)
    return index[1]


def _exported(model):
    """What `from module import *` binds: a literal `__all__` (a set), True for every public name, None if computed."""
    names = None
    for node in _summary(model)[0]:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else []
        if not any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            continue
        value = node.value
        if isinstance(node, ast.AugAssign) and names is not None and isinstance(value, (ast.List, ast.Tuple)):
            pass
        elif isinstance(node, ast.AugAssign) or not isinstance(value, (ast.List, ast.Tuple)):
            return None
        items = [e.value for e in value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        if len(items) != len(value.elts):
            return None
        names = (names or set()) | set(items) if isinstance(node, ast.AugAssign) else set(items)
    return True if names is None else names


def _binds_value_or_class(model, name: str) -> bool:
    top, _, assigned = _summary(model)
    if any(isinstance(node, ast.ClassDef) and node.name == name for node in top):
        return True
    return name in assigned and name not in model.imports.names


def _last_binding(model, name: str):
    """The last top-level statement binding `name` if it is unconditional (directly in the module body), else None."""
    last = None
    for node in _summary(model)[0]:
        if _binds(node, name):
            last = node
    body = model.tree.body
    return last if last is not None and any(stmt is last for stmt in body) else None


def _undecided_branch_def(model, name: str):
    """The def or class of `if FLAG: name = ... else: class name: ...` (either branch order) at the top of a module,
    when nothing else binds `name` and FLAG is set to both True and False inside try/except blocks (pyg's
    `WITH_CUDA_HASH_MAP`): jedi cannot decide the branch, answers with both bindings, and the def or class is the
    one a caller can use. None for every other shape (jedi decides)."""
    top = _summary(model)[0]
    bindings = [node for node in top if _binds(node, name)]
    if len(bindings) != 2:
        return None
    branch = next((node for node in model.tree.body if isinstance(node, ast.If) and bindings[0] in node.body), None)
    if branch is None or not any(node is bindings[1] for node in branch.orelse) or not isinstance(branch.test, ast.Name):
        return None
    defs = [node for node in bindings if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    values = [node for node in bindings if isinstance(node, (ast.Assign, ast.AnnAssign))]
    if len(defs) != 1 or len(values) != 1 or not _undecided_flag(model, branch.test.id):
        return None
    return defs[0]


def _undecided_flag(model, flag: str) -> bool:
    """`flag` holds True on some paths and False on others as jedi reads it: its last bindings, latest first, lie
    inside top-level try/except blocks (each may or may not run) down to one unconditional binding, and they are
    plain `flag = True` / `flag = False`. Any other binding (in an `if`, a loop, a computed value): not undecided."""
    values = set()

    def walk(body, in_try):
        for node in body:
            if isinstance(node, ast.Try):
                for block in (node.body, *(handler.body for handler in node.handlers), node.orelse, node.finalbody):
                    yield from walk(block, True)
            elif _binds(node, flag) or isinstance(node, ast.If) and _binds_anything(_top_level([node]), flag):
                yield node, in_try

    for node, in_try in reversed(list(walk(model.tree.body, False))):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, ast.Constant) and isinstance(node.value.value, bool)):
            return False
        values.add(node.value.value)
        if not in_try:
            break
    return values == {True, False}


def _binds_anything(top, name: str) -> bool:
    return any(_binds(node, name) for node in top)


def _binds(node, name: str) -> bool:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return node.name == name
    if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        return name in syntax.bound_names(node)
    if isinstance(node, ast.Import):
        return any((alias.asname or alias.name.split(".", 1)[0]) == name for alias in node.names)
    if isinstance(node, ast.ImportFrom):
        return any((alias.asname or alias.name) == name or alias.name == "*" for alias in node.names)
    if isinstance(node, (ast.If, ast.Try)):
        return False  # their statements are listed on their own
    # loops, with, match, expressions (`(x := 1)`): any name stored in them
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)
               or isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.name == name for n in ast.walk(node))
