"""Import aliases resolved from the syntax alone: `import torch as th`, `from torch import nn, tensor as T`..."""
from __future__ import annotations

import ast


class ImportTable:
    """Maps local names to the qualified names they were imported as."""

    def __init__(self, tree: ast.Module, package: str | None = None):
        self.names: dict[str, str] = {}
        self.relative: set[str] = set()  # names imported from this workspace's relative modules
        self.torch_alias: str | None = None  # a local name bound to the torch module, for fixes
        for node in _import_statements(tree.body):
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

    def qualname(self, node: ast.expr) -> str | None:
        """`F.conv2d` -> "torch.nn.functional.conv2d" when F is an imported module alias; else None."""
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        base = self.names.get(node.id)
        if base is None:
            return None
        parts.append(base)
        return ".".join(reversed(parts))

    def is_torch(self, qualname: str | None) -> bool:
        return bool(qualname) and (qualname == "torch" or qualname.startswith("torch."))


_BLOCK_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")


def _import_statements(body):
    """Import statements at any depth of statement nesting; expressions are never entered (they hold none)."""
    stack = list(reversed(body))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
            continue
        for field in _BLOCK_FIELDS:
            children = getattr(node, field, None)
            if children:
                stack.extend(reversed(children))
