"""Import aliases resolved from the syntax alone: `import torch as th`, `from torch import nn, tensor as T`..."""
from __future__ import annotations

import ast
import bisect
import re
from functools import cached_property

from .syntax import kept_on, statements

_IMPORT = re.compile("import")


class ImportTable:
    """Maps local names to the qualified names they were imported as."""

    def __init__(self, tree: ast.Module, package: str | None = None, text: str | None = None):
        """`text`, the tree's source when known, lets the search skip blocks (function and class bodies...) whose
        lines never say "import"."""
        self.names: dict[str, str] = {}
        self.relative: set[str] = set()  # names imported from this workspace's relative modules
        self.torch_alias: str | None = None  # a local name bound to the torch module, for fixes
        self.stars: list[str] = []  # the modules of `from X import *`, in order
        for node in statements(tree.body, (ast.Import, ast.ImportFrom), _lines_saying_import(text)):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        self.names[alias.asname] = alias.name
                    else:
                        top = alias.name.split(".", 1)[0]
                        self.names.setdefault(top, top)
                    if alias.name == "torch":
                        self.torch_alias = alias.asname or "torch"
            elif isinstance(node, ast.ImportFrom):
                module = node.module or ""
                prefix = ("." * node.level) + module
                for alias in node.names:
                    if alias.name == "*":
                        self.stars.append(prefix)
                        continue
                    local = alias.asname or alias.name
                    self.names[local] = f"{prefix}.{alias.name}" if prefix and not prefix.endswith(".") else prefix + alias.name
                    if node.level:
                        self.relative.add(local)
        for name in _rebound_at_module_level(tree, self.names):
            # `from torchao import optim` ... `optim = optim_cls(params)`: later uses mean the new value, earlier
            # ones the module; which one a use sees is flow, so the name is not taken as the import anywhere
            del self.names[name]
            self.relative.discard(name)

    @cached_property
    def other_framework(self) -> bool:
        """The module imports another autograd framework (mxnet, paddle...) and nothing of torch: names alone
        (`optimizer.step()`, `loss.backward()`) are that framework's."""
        from .torch_api import OTHER_AUTOGRAD_FRAMEWORKS

        tops = {qualname.lstrip(".").split(".", 1)[0] for qualname in self.names.values()}
        return "torch" not in tops and not tops.isdisjoint(OTHER_AUTOGRAD_FRAMEWORKS)

    @classmethod
    def of(cls, tree: ast.Module, text: str | None = None) -> "ImportTable":
        """The table of a tree, kept on it (syntax.kept_on); `text`: the source it was parsed from, if known."""
        return kept_on(tree, "_import_table", lambda node: cls(node, text=text))

    def qualname(self, node: ast.expr) -> str | None:
        """`F.conv2d` -> "torch.nn.functional.conv2d" when F is an imported module alias; else None."""
        attrs = []  # (one pass down the chain: the walk asks this of every call and decorator)
        while type(node) is ast.Attribute:
            attrs.append(node.attr)
            node = node.value
        if type(node) is not ast.Name:
            return None
        imported = self.names.get(node.id)
        if imported is None or not attrs:
            return imported  # (most chains start at `self` or a local: no string is built for them)
        attrs.append(imported)
        return ".".join(reversed(attrs))

    def is_torch(self, qualname: str | None) -> bool:
        return bool(qualname) and (qualname == "torch" or qualname.startswith("torch."))


def _rebound_at_module_level(tree: ast.Module, names: dict) -> set:
    """Imported names that a module-level statement assigns or defines again (not in an `except` handler: `try: import apex` /
    `except ImportError: apex = None` keeps the import's meaning where the import worked)."""
    if not names:
        return set()
    found, stack = set(), list(tree.body)
    while stack:
        node = stack.pop()
        kind = type(node)
        targets = ()
        if kind is ast.Assign:
            targets = node.targets
        elif kind is ast.AnnAssign or kind is ast.AugAssign:
            targets = (node.target,)
        elif kind is ast.For or kind is ast.AsyncFor:
            targets = (node.target,)
            stack.extend(node.body)
            stack.extend(node.orelse)
        elif kind is ast.If or kind is ast.While:
            stack.extend(node.body)
            stack.extend(node.orelse)
        elif kind is ast.With or kind is ast.AsyncWith:
            targets = tuple(item.optional_vars for item in node.items if item.optional_vars is not None)
            stack.extend(node.body)
        elif kind is ast.Try or kind.__name__ == "TryStar":
            stack.extend(node.body)
            stack.extend(node.orelse)
            stack.extend(node.finalbody)
        elif kind is ast.ClassDef or kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
            if node.name in names:
                found.add(node.name)  # `class nn:` after `import torch.nn as nn`: the name is that class from then on
        targets = list(targets)
        while targets:  # names bound (`x`, `a, *b`), not attributes or items (`torch.x.y = 1` keeps `torch`)
            target = targets.pop()
            if type(target) is ast.Name:
                if target.id in names:
                    found.add(target.id)
            elif type(target) in (ast.Tuple, ast.List):
                targets.extend(target.elts)
            elif type(target) is ast.Starred:
                targets.append(target.value)
    return found


def _lines_saying_import(text: str | None):
    """A test `(first, last) -> some line from first to last holds "import"`, from one search of the text; None
    (enter every block) without a text or where lines may end in "\r" (counted otherwise by the parser)."""
    if text is None or "\r" in text:
        return None
    lines, line, position = [], 1, 0
    for match in _IMPORT.finditer(text):
        line += text.count("\n", position, match.start())
        position = match.start()
        lines.append(line)

    def enter(first: int, last: int) -> bool:
        index = bisect.bisect_left(lines, first)
        return index < len(lines) and lines[index] <= last

    return enter
