"""Import aliases resolved from the syntax alone: `import torch as th`, `from torch import nn, tensor as T`..."""
from __future__ import annotations

import ast
from functools import cached_property

from .syntax import dotted, head, kept_on, statements


class ImportTable:
    """Maps local names to the qualified names they were imported as."""

    def __init__(self, tree: ast.Module, package: str | None = None):
        self.names: dict[str, str] = {}
        self.relative: set[str] = set()  # names imported from this workspace's relative modules
        self.torch_alias: str | None = None  # a local name bound to the torch module, for fixes
        for node in statements(tree.body, (ast.Import, ast.ImportFrom)):
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
                        continue
                    local = alias.asname or alias.name
                    self.names[local] = f"{prefix}.{alias.name}" if prefix and not prefix.endswith(".") else prefix + alias.name
                    if node.level:
                        self.relative.add(local)

    @cached_property
    def other_framework(self) -> bool:
        """The module imports another autograd framework (mxnet, paddle...) and nothing of torch: names alone
        (`optimizer.step()`, `loss.backward()`) are that framework's."""
        from .torch_api import OTHER_AUTOGRAD_FRAMEWORKS

        tops = {qualname.lstrip(".").split(".", 1)[0] for qualname in self.names.values()}
        return "torch" not in tops and not tops.isdisjoint(OTHER_AUTOGRAD_FRAMEWORKS)

    @classmethod
    def of(cls, tree: ast.Module) -> "ImportTable":
        """The table of a tree, kept on it (syntax.kept_on)."""
        return kept_on(tree, "_import_table", cls)

    def qualname(self, node: ast.expr) -> str | None:
        """`F.conv2d` -> "torch.nn.functional.conv2d" when F is an imported module alias; else None."""
        start = head(node)
        if start is None or start.id not in self.names:
            return None  # (most chains start at `self` or a local: no string is built for them)
        name = dotted(node)
        head_name, dot, rest = name.partition(".")
        return self.names[head_name] + dot + rest

    def is_torch(self, qualname: str | None) -> bool:
        return bool(qualname) and (qualname == "torch" or qualname.startswith("torch."))


