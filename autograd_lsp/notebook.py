"""Jupyter notebooks as Python: IPython syntax masked into Python of the same shape, fixes written back.

A code cell is Python plus IPython's escapes: line magics (`%pip install x`), shell escapes (`!ls`,
`files = !ls`), help (`x?`, `??x`) and a cell magic on the first line (`%%time`). Each escape that starts a
statement becomes a `pass` at the same indentation (so an `if` whose body is a magic stays valid), an
assignment from an escape keeps its target (`files = ...`), and `%time stmt` keeps `stmt` at its column
(`pass; stmt`). Lines keep their number and the other lines their columns, so findings map back to cells and
fixes apply to the cells' own text. Escapes inside brackets, strings or continued lines are not escapes
(IPython does not read them there either), so the line scanner tracks those.
"""
from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass

# Cell magics whose body IPython runs as Python; any other (`%%bash`, `%%html`, `%%writefile`) is not Python.
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug"})
# Line magics followed by a Python statement that runs as written (without options: `%timeit -n 3 f()` is masked).
_STATEMENT_MAGIC = re.compile(r"%(?:time|timeit|prun)[ \t]+(?=[^-\s])")
_ASSIGN_ESCAPE = re.compile(r"[A-Za-z_][\w.]*(?:\s*,\s*[A-Za-z_][\w.]*)*\s*=\s*(?=[!%])")
_ESCAPE_START = ("%", "!", "?", "/", ",", ";")  # `/f x`, `,f x`, `;f x`: IPython's autocall escapes
# IPython's line magics (`%lsmagic`), which its automagic (on by default) runs without the `%`: `pip install x`,
# `cd data`. A line is one only when it starts with the name, a space follows, and it is not Python by itself.
AUTOMAGICS = frozenset("""alias alias_magic autoawait autocall automagic bookmark cat cd clear colors conda config cp
    cpaste debug dhist dirs doctest_mode ed edit env gui hist history killbgscripts ldir less lf lk ll load load_ext
    loadpy logoff logon logstart logstate logstop ls lsmagic lx macro magic man matplotlib mkdir more mv notebook page
    paste pastebin pdb pdef pdoc pfile pinfo pinfo2 pip popd pprint precision prun psearch psource pushd pwd pycat
    pylab qtconsole quickref recall rehashx reload_ext rep rerun reset reset_selective rm rmdir run save sc set_env
    store sx system tb time timeit unalias unload_ext uv who who_ls whos xdel xmode""".split())
_AUTOMAGIC = re.compile(r"([A-Za-z_]\w*)[ \t]+(?!=(?!=)|[(\[,:;)]|\.[A-Za-z_]|$)")  # (not `ls = [`, `time (`: Python going on)
# IPython's classic prompts (code pasted from a doctest): stripped when the cell's first line has one.
_CLASSIC_FIRST = re.compile(r">>>(?: |$)")
_CLASSIC = re.compile(r"(?:>>>|\.\.\.)(?: |$)")
_COMPOUND = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try, ast.FunctionDef,
             ast.AsyncFunctionDef, ast.ClassDef) + ((ast.Match,) if hasattr(ast, "Match") else ())


@dataclass
class _Scan:
    """Where a line ends: inside how many brackets, inside which string, continued by a backslash."""

    depth: int = 0
    string: str | None = None  # the open quote: ', ", ''' or \"\"\"
    continued: bool = False

    @property
    def at_statement_start(self) -> bool:
        return self.depth == 0 and self.string is None and not self.continued

    def feed(self, line: str) -> int:
        """Advance over one line; returns where its comment starts (its length when it has none). Jumps from
        one character that matters to the next (brackets, quotes, '#'; in a string its quote or a backslash)."""
        i, n, comment = 0, len(line), False
        while i < n:
            if self.string is not None:
                match = _STRING_STOP[self.string].search(line, i)
                if match is None:
                    i = n
                elif match.group() == "\\":
                    i = match.end() + 1
                else:
                    i, self.string = match.end(), None
                continue
            match = _CODE_STOP.search(line, i)
            if match is None:
                break
            char, i = match.group(), match.end()
            if char == "#":
                comment = True
                i = match.start()
                break
            if char in "([{":
                self.depth += 1
            elif char in ")]}":
                self.depth = max(0, self.depth - 1)
            else:
                self.string = char * 3 if line.startswith(char * 3, i - 1) else char
                i += len(self.string) - 1
        self.continued = line.endswith("\\") and not comment
        if self.string in ("'", '"') and not self.continued:
            self.string = None  # an unterminated one-line string: a syntax error the parser reports
        return i if comment else n


_CODE_STOP = re.compile(r"[][(){}'\"#]")
_STRING_STOP = {quote: re.compile(r"\\|" + re.escape(quote)) for quote in ("'", '"', "'''", '"""')}


def _simple_statement(text: str) -> bool:
    try:
        body = ast.parse(text).body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return len(body) == 1 and not isinstance(body[0], _COMPOUND)


def _parses(text: str) -> bool:
    try:
        ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def _mask_statement(line: str) -> str | None:
    """The Python of the same shape for an IPython escape starting a statement; None for a Python line."""
    body = line.lstrip()
    indent = line[: len(line) - len(body)]
    if not body or body.startswith("#"):
        return None
    if body.startswith(_ESCAPE_START):
        magic = _STATEMENT_MAGIC.match(body)
        if magic and _simple_statement(body[magic.end():]):
            return indent + "pass;".ljust(magic.end()) + body[magic.end():]
        return indent + "pass"
    automagic = _AUTOMAGIC.match(body)
    if automagic and automagic.group(1) in AUTOMAGICS and not _parses(body):
        return indent + "pass"
    if "?" in body:  # `x?`, `obj.attr??`; not `"""Why?` (a docstring) nor `x = 1  # why?`
        probe = _Scan()
        if body[: probe.feed(body)].rstrip().endswith("?") and probe.string is None:
            return indent + "pass"
    if "!" in body or "%" in body:
        assign = _ASSIGN_ESCAPE.match(body)
        if assign:
            return indent + body[: assign.end()] + "..."
    return None


def mask_cell(text: str) -> tuple[list[str], frozenset[int]]:
    """The cell's lines as Python, and the 0-based numbers of the lines that were IPython (now masked)."""
    lines = text.split("\n")
    masked: set[int] = set()
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is not None and _CLASSIC_FIRST.match(lines[first]):
        # `>>> x = f()` / `... more`: IPython removes the prompts (the cell is then indented by their width, which
        # join_cells handles as IPython does); the columns stay, the lines count as masked (fixes leave them)
        for number, line in enumerate(lines):
            prompt = _CLASSIC.match(line)
            if prompt:
                lines[number] = " " * prompt.end() + line[prompt.end():]
                masked.add(number)
    start = 0
    if first is not None and lines[first].lstrip().startswith("%%"):
        name = re.match(r"%%(\w*)", lines[first].lstrip()).group(1)
        if name not in PYTHON_CELL_MAGICS:  # the body is not Python: nothing in this cell is analysed
            return [""] * len(lines), frozenset(range(len(lines)))
        lines[first] = lines[first][: len(lines[first]) - len(lines[first].lstrip())] + "pass"
        masked.add(first)
        start = first + 1
    scan, escape_continues = _Scan(), False
    for number in range(start, len(lines)):
        line = lines[number]
        if escape_continues:  # `%pip install a \` continued: still the magic's arguments
            escape_continues = line.endswith("\\")
            lines[number] = ""
            masked.add(number)
            continue
        if scan.at_statement_start:
            replacement = _mask_statement(line)
            if replacement is not None:
                lines[number] = replacement
                masked.add(number)
                escape_continues = line.endswith("\\")
                continue
        scan.feed(line)
    return lines, frozenset(masked)


# -- reading and writing .ipynb files ------------------------------------------------------------------
class NotebookError(ValueError):
    """JSON that is not an nbformat 4 notebook."""


def code_cells(raw: str) -> list[tuple[int, str]]:
    """(index among all cells, source text) of each code cell; raises NotebookError on anything malformed."""
    try:
        notebook = json.loads(raw)
    except ValueError as error:
        raise NotebookError(f"not valid JSON ({error})") from None
    if not isinstance(notebook, dict) or "cells" not in notebook:
        raise NotebookError("no 'cells' list at the top level")
    cells = notebook["cells"]
    if not isinstance(cells, list):
        raise NotebookError(f"'cells' is {type(cells).__name__}, not a list")
    out = []
    for index, cell in enumerate(cells):
        if not isinstance(cell, dict) or not isinstance(cell.get("cell_type"), str):
            raise NotebookError(f"cell {index + 1} is not an object with a 'cell_type'")
        if cell["cell_type"] == "code":
            out.append((index, cell_text(cell, index)))
    return out


def cell_text(cell: dict, index: int) -> str:
    source = cell.get("source", "")
    if isinstance(source, list) and all(isinstance(part, str) for part in source):
        return "".join(source)
    if isinstance(source, str):
        return source
    raise NotebookError(f"cell {index + 1}: 'source' is neither a string nor a list of strings")


def _json_style(raw: str) -> dict:
    """json.dumps options that reproduce how the file was written (nbformat: indent=1, non-ASCII kept)."""
    indent: int | str | None = None
    match = re.search(r"\{\r?\n([ \t]+)\"", raw)
    if match:
        whitespace = match.group(1)
        indent = len(whitespace) if set(whitespace) == {" "} else whitespace
    ascii_only = raw.isascii() and re.search(r"\\u[0-9a-fA-F]{4}", raw) is not None
    separators = None if indent is not None or re.search(r"[\[{,]\s*\"[^\"]*\": ", raw[:4096]) else (",", ":")
    return {"indent": indent, "ensure_ascii": ascii_only, "separators": separators}


def with_cells(raw: str, texts: dict[int, str]) -> str:
    """The notebook's JSON with the source of the cells in `texts` (index -> new text) replaced; every other
    value is kept, in its order, and the file is written with the original indent, escaping and final newline."""
    notebook = json.loads(raw)
    for index, text in texts.items():
        cell = notebook["cells"][index]
        if "\r\n" in cell_text(cell, index):  # texts come with LF line endings: give the cell its own back
            text = text.replace("\n", "\r\n")
        if isinstance(cell.get("source"), list):
            cell["source"] = re.findall(r"[^\n]*\n|[^\n]+\Z", text)  # Jupyter's lines (splitlines would split at \f too)
        else:
            cell["source"] = text
    out = json.dumps(notebook, **_json_style(raw))
    if "\r\n" in raw:
        out = out.replace("\n", "\r\n")
    trailing = raw[len(raw.rstrip()):]
    return out + trailing
