"""Incremental parsing for the language server: after an edit only the statements the edit touched are parsed
again, and spliced into the previous tree; the result is the tree `ast.parse` gives for the whole new text.

The edit is the run of lines between the common prefix and the common suffix of the old and new text. It is
placed in the innermost statement list (module, class, function or block body) whose statements contain it;
the touched statements of that list, with the comment lines around them, are parsed on their own (a nested
list under a stand-in `if 1:` header, so that columns stay those of the file). What the isolated parse could
read differently from the whole file sends it to a full parse instead: a cut after a backslash continuation,
tabs or form feeds in the indentation, a block whose indentation is not its siblings', anything left outside
the stand-in block, a changed number of lines (every later node would move). The tree is never modified in
place: the statement lists on the path to the edit are copied, every other node is shared with the previous
tree (which stays intact for whoever still reads it).

When the reparsed statements equal the old ones node for node, positions included (an edit of a comment or of
trailing white space), the previous tree itself is returned and `same` is set: a walk of it is still valid.
"""
from __future__ import annotations

import ast
import copy
import logging
import traceback
from dataclasses import dataclass

_BLOCKS = (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef, ast.For, ast.AsyncFor, ast.While, ast.If, ast.With,
           ast.AsyncWith, ast.Try)
if hasattr(ast, "TryStar"):
    _BLOCKS += (ast.TryStar,)

log = logging.getLogger(__name__)

_HEADER = "if 1:\n"  # the stand-in block header of a nested statement list (one line)


@dataclass
class Parsed:
    tree: ast.Module
    same: bool  # the previous tree, unchanged: the edit changed no node
    reparsed_lines: int  # lines parsed for this text (the whole text after a full parse)
    # a splice: the tree it was made from, and the statements on the path to the edit, (old node, its copy) from
    # the module down to the owner of the edited list (analysis/rewalk.py walks again only what they hold)
    base: ast.Module | None = None
    path: tuple = ()


def _start(stmt: ast.stmt) -> int:
    """0-based first line of a statement, decorators included."""
    line = stmt.lineno
    for decorator in getattr(stmt, "decorator_list", ()):
        line = min(line, decorator.lineno)
    return line - 1


def _end(stmt: ast.stmt) -> int:
    return stmt.end_lineno - 1  # 0-based last line


def _indent(line: str) -> str | None:
    """The leading spaces of a line; None when the indentation holds a tab or a form feed (their widths
    depend on the enclosing lines, which an isolated parse does not see)."""
    stripped = line.lstrip(" ")
    if stripped[:1] in ("\t", "\f"):
        return None
    return line[: len(line) - len(stripped)]


class Reparser:
    """The last text that parsed and its tree; `parse` answers for a new text of the same document."""

    def __init__(self):
        self.last: tuple[list[str], ast.Module] | None = None  # (lines, tree), replaced as one (forget() may run on another thread)

    def forget(self):
        """Drop the tree (memory); the next text is parsed in full."""
        self.last = None

    def parse(self, source, full_parse) -> "Parsed | object":
        """The tree of `source` (a Source), or what `full_parse(source)` returns when its text does not parse (a
        finding); `full_parse` returns an ast.Module for text that parses (checker.parse)."""
        text, lines = source.text, source.lines
        last = self.last
        if last is not None and "\r" not in text:
            try:
                done = _Splice(*last).splice(lines)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                done = None  # the touched statements alone do not parse: the full parse says why
            if done is not None:
                self.last = (lines, done.tree)
                return done
        result = full_parse(source)
        if isinstance(result, ast.Module):
            self.last = (lines, result)
            return Parsed(result, False, len(lines))
        return result


class _Splice:
    """One splice of a new text into the tree of the old one."""

    def __init__(self, lines: list[str], tree: ast.Module):
        self.lines = lines
        self.tree = tree

    def splice(self, new: list[str]) -> Parsed | None:
        old = self.lines
        if len(new) != len(old):
            return None  # lines added or removed: every later node would move (a full parse is as cheap)
        first, count = 0, len(old)
        while first < count and old[first] == new[first]:
            first += 1
        if first == count:
            return Parsed(self.tree, True, 0)
        last = count - 1
        while old[last] == new[last]:
            last -= 1
        path: list[tuple[ast.AST, str]] = []  # (node, field) from the module down to the list the edit is in
        body = self.tree.body
        node_field = (self.tree, "body")
        while True:
            inner = _inner_block(body, first, last)
            if inner is None:
                break
            path.append(node_field)
            node_field = inner
            body = getattr(*inner)
        path.append(node_field)
        while path:
            done = self._splice_into(path, new, first, last)
            if done is not None:
                return done
            path.pop()  # cannot be cut at this depth: try the enclosing list
        return None

    def _splice_into(self, path, new: list[str], first: int, last: int) -> Parsed | None:
        owner, name = path[-1]
        body: list[ast.stmt] = getattr(owner, name)
        nested = len(path) > 1
        spans = [(_start(stmt), _end(stmt)) for stmt in body]
        count = len(body)
        i = 0
        while i < count and spans[i][1] < first:
            i += 1
        j = i
        while j < count and spans[j][0] <= last:
            j += 1
        # statements sharing a line (`a = 1; b = 2`) are cut together; never cut after a backslash continuation
        while True:
            if i > 0 and i < count and spans[i][0] <= spans[i - 1][1]:
                i -= 1
                continue
            start = spans[i - 1][1] + 1 if i > 0 else (spans[0][0] if nested else 0)
            if start > 0 and new[start - 1].endswith("\\"):
                if i == 0:
                    return None
                i -= 1
                continue
            break
        while True:
            if 0 < j < count and spans[j][0] <= spans[j - 1][1]:
                j += 1
                continue
            stop = spans[j][0] if j < count else (spans[-1][1] + 1 if nested else len(new))
            if stop > 0 and stop < len(new) and new[stop - 1].endswith("\\"):
                if j == count:
                    return None
                j += 1
                continue
            break
        if not nested:
            module = ast.parse("\n".join(new[start:stop]))
            statements = module.body
            for stmt in statements:
                ast.increment_lineno(stmt, start)
        else:
            indent = _indent(self.lines[spans[0][0]])  # the siblings' indentation
            if not indent or any(_indent(line) is None for line in new[start:stop]):
                return None
            module = ast.parse(_HEADER + "\n".join(new[start:stop]) + "\n" + indent + "pass")
            if len(module.body) != 1 or not isinstance(module.body[0], ast.If) or module.body[0].orelse:
                return None
            block = module.body[0].body
            sentinel = block[-1]
            if not isinstance(sentinel, ast.Pass) or sentinel.lineno != stop - start + 2 or sentinel.col_offset != len(indent):
                return None
            if _indent(new[block[0].lineno - 2 + start]) != indent:
                return None  # (the block's indentation is set by its first statement)
            statements = block[:-1]
            if not statements and i == 0 and j == count:
                return None  # a body left empty does not parse
            for stmt in statements:
                ast.increment_lineno(stmt, start - 1)
        lines = stop - start
        replaced = body[i:j]
        if len(statements) == len(replaced) and all(_same(a, b) for a, b in zip(statements, replaced)):
            return Parsed(self.tree, True, lines)
        clones: list = []
        tree = _copy_path(path, body[:i] + statements + body[j:], clones)
        return Parsed(tree, False, lines, self.tree, tuple(zip([owner for owner, _ in path], clones)))


def _inner_block(body: list[ast.stmt], first: int, last: int):
    """(statement, "body") when lines first..last lie inside the body of one compound statement of `body`,
    and that body starts on a line of its own; else None."""
    for stmt in body:
        if _start(stmt) > last:
            return None
        if _end(stmt) < first:
            continue
        if not isinstance(stmt, _BLOCKS):
            return None
        inner = stmt.body
        if not inner or inner[0].lineno <= stmt.lineno:
            return None  # `if x: y` on one line
        if _start(inner[0]) <= first and last <= _end(inner[-1]):
            return stmt, "body"
        return None
    return None


def _same(a: ast.AST, b: ast.AST) -> bool:
    return ast.dump(a, include_attributes=True) == ast.dump(b, include_attributes=True)


def _copy_path(path, statements: list[ast.stmt], clones: list) -> ast.Module:
    """A new tree: the nodes on `path` (the module down to the owner of the edited list) copied, `statements` in
    the last list, every other node shared with the old tree. A copy whose last block ended it ends where the
    new block ends. `clones` receives the copies, module first."""
    replacement = statements
    for index in range(len(path) - 1, -1, -1):
        owner, name = path[index]
        old_list = getattr(owner, name)
        clone = copy.copy(owner)
        clones.insert(0, clone)
        setattr(clone, name, replacement)
        if not isinstance(owner, ast.Module) and old_list and (owner.end_lineno, owner.end_col_offset) == (
                old_list[-1].end_lineno, old_list[-1].end_col_offset):
            clone.end_lineno, clone.end_col_offset = replacement[-1].end_lineno, replacement[-1].end_col_offset
        if index == 0:
            return clone
        parent, parent_name = path[index - 1]
        siblings = getattr(parent, parent_name)
        position = next(k for k, stmt in enumerate(siblings) if stmt is owner)
        replacement = [*siblings[:position], clone, *siblings[position + 1:]]
    raise AssertionError("unreachable")


class IncrementalCheck:
    """The checks of one document, edit after edit: each text is parsed incrementally against the last one
    that parsed, and when the edit changed no node, the rules run again on the model of the unchanged tree
    (`reuse`: the caller's model of it, walked with the same resolver answers) instead of walking it again.
    When the edit lies inside one function body, that function is walked again and the rest of the walk is
    kept (analysis/rewalk.py). The findings are those of `check_source` on the text (tests/test_incremental.py
    compares them)."""

    def __init__(self):
        self.reparser = Reparser()

    def check(self, source, settings=None, resolver=None, reuse=None):
        from ..checker import DEFAULT_SETTINGS, CheckResult, check_source, parse, recheck

        settings = settings if settings is not None else DEFAULT_SETTINGS
        parsed = self.reparser.parse(source, parse)
        if not isinstance(parsed, Parsed):
            if source.cells:  # a notebook: its other cells are analysed without the broken ones (checker)
                return check_source(source, settings, resolver=resolver, tree=parsed)
            return CheckResult(source, [parsed])  # the text does not parse: the full parse's finding
        if reuse is not None and reuse.__dict__.get("stale"):
            reuse = None  # (a walk again that stopped half-way: analysis/rewalk.py)
        if parsed.same and reuse is not None and reuse.tree is parsed.tree:
            try:
                result = recheck(reuse, source, settings, walk_kept=True)
                result.walked = "none"
                return result
            except RecursionError:
                pass  # (check_source retries on a deeper stack)
        elif reuse is not None and parsed.base is not None and reuse.tree is parsed.base:
            if _rewalked(reuse, parsed, source, resolver):  # the edited function again, the rest of the walk kept
                try:
                    result = recheck(reuse, source, settings)
                    result.walked = "function"
                    return result
                except RecursionError:
                    pass
        return check_source(source, settings, resolver=resolver, tree=parsed.tree)


def _rewalked(model, parsed, source, resolver) -> bool:
    """rewalk(), where its failure (a defect) is a walk of the whole module instead: the half-changed model is never
    reused, and a defect of the whole walk is then check_source's AG000 finding."""
    from .rewalk import rewalk

    try:
        return rewalk(model, parsed, source, resolver)
    except RecursionError:
        raise
    except Exception:
        log.error("walking %s again after an edit failed; walking the whole module:\n%s", source.path or "<buffer>",
                  traceback.format_exc())
        model.stale = True
        return False
