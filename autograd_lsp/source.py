"""Source text as the analyzer sees it: decoding, notebooks joined into one program, position maps."""
from __future__ import annotations

import codecs
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from .notebook import NotebookError, NotPythonNotebook, code_cells, mask_cell


class SourceError(Exception):
    """A file that cannot be read as Python (bad encoding, broken notebook JSON)."""


class NotPythonSource(SourceError):
    """A file that is fine but not Python (a notebook whose kernel runs Julia or R): nothing to analyse."""


@dataclass(frozen=True)
class Cell:
    index: int  # 0-based position among all cells of the notebook
    first_line: int  # 1-based line of the cell's first line in the joined program
    line_count: int
    text: str = ""  # the cell's own text (LF line endings), IPython syntax and all
    masked: frozenset[int] = frozenset()  # 0-based lines of the cell that were IPython syntax, masked for analysis
    indented: bool = False  # its first line is indented (IPython strips that indentation): an `if True:` line precedes it

    def contains(self, line: int) -> bool:
        return self.first_line <= line < self.first_line + self.line_count


@dataclass
class Source:
    """The text to analyse; for a notebook, its code cells joined in order with a map back to cells."""

    text: str
    path: str | None = None
    cells: list[Cell] | None = None
    _lines: list[str] | None = field(default=None, repr=False)

    @property
    def lines(self) -> list[str]:
        if self._lines is None:
            self._lines = self.text.split("\n")
        return self._lines

    def line_text(self, line: int) -> str:
        lines = self.lines
        return lines[line - 1] if 0 < line <= len(lines) else ""

    def cell_of(self, line: int) -> tuple[int, int] | None:
        """(cell index, 1-based line inside the cell) of a joined-program line, for notebooks."""
        if not self.cells:
            return None
        for cell in reversed(self.cells):
            if line >= cell.first_line:
                return cell.index, line - cell.first_line + 1
        return None


    def in_cells(self, message: str) -> str:
        """A message's `line N` references (lines of the joined program) as `cell C, line L` for notebooks."""
        if not self.cells or "line " not in message:
            return message

        def cell_line(match: re.Match) -> str:
            cell = self.cell_of(int(match.group(1)))
            return match.group(0) if cell is None else f"cell {cell[0] + 1}, line {cell[1]}"

        return _LINE_REFERENCE.sub(cell_line, message)


_LINE_REFERENCE = re.compile(r"\bline (\d+)\b")
_CODING = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")


def declared_encoding(data: bytes) -> str | None:
    """The PEP 263 declaration of the first two lines (`# -*- coding: latin-1 -*-`), if any."""
    for line in data[:4096].split(b"\n", 2)[:2]:  # (a slice: not a copy of the whole file)
        match = _CODING.match(line)
        if match:
            return match.group(1).decode("ascii")
        if line.strip() and not line.lstrip().startswith(b"#"):
            break  # the declaration must come before any code
    return None


def decode_python(data: bytes, path: str | None = None) -> tuple[str, str]:
    """The text of a Python file and its encoding, as Python reads it: a UTF-8 BOM, else the PEP 263
    declaration, else UTF-8. Line endings are kept (see `normalise`)."""
    where = f"{path}: " if path else ""
    if data.startswith(codecs.BOM_UTF8):
        encoding = "utf-8-sig"
    else:
        declared = declared_encoding(data)
        encoding = "utf-8"
        if declared is not None:
            try:
                encoding = codecs.lookup(declared).name
            except LookupError:
                raise SourceError(f"{where}unknown encoding {declared!r} in the coding declaration (PEP 263)") from None
    try:
        return data.decode(encoding), encoding
    except UnicodeDecodeError as error:
        if encoding.startswith("utf-8") and declared_encoding(data) is None:
            raise SourceError(f"{where}not valid UTF-8 (byte {error.start}) and no coding declaration: save the file as "
                              f"UTF-8 or declare its encoding on line 1 or 2 (`# -*- coding: latin-1 -*-`, PEP 263)") from None
        raise SourceError(f"{where}not valid {encoding} (byte {error.start}), the encoding its coding declaration names") from None


def normalise(text: str) -> str:
    """Line endings as the analysis sees them: every CRLF and lone CR becomes LF (line numbers are unchanged)."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def decode(data: bytes, path: str | None = None) -> str:
    """UTF-8 text (a notebook's JSON, an editor buffer's bytes) with normalised line endings."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        where = f"{path}: " if path else ""
        raise SourceError(f"{where}not valid UTF-8 (byte {error.start}); notebooks are UTF-8 JSON") from None
    return normalise(text)


def notebook_source(raw: str, path: str | None = None) -> Source:
    try:
        cells = code_cells(raw)
    except NotPythonNotebook as error:
        raise NotPythonSource(f"{path or 'notebook'}: {error}") from None
    except NotebookError as error:
        raise SourceError(f"{path or 'notebook'}: not a valid .ipynb notebook: {error}") from None
    return join_cells(cells, path)


def join_cells(cells: list[tuple[int, str]], path: str | None = None) -> Source:
    """Join code cells (index, text) into one program; IPython syntax is masked into Python of the same shape."""
    parts: list[str] = []
    cell_map: list[Cell] = []
    line = 1
    for index, text in cells:
        text = normalise(text)
        lines, masked = mask_cell(text)
        indented = _leading_indent(lines)
        if indented:
            # IPython removes the first line's indentation from every line of the cell (its `leading_indent`
            # transform); an `if True:` line of its own, between the cells, keeps the cell's lines and columns
            parts.append(INDENTED_CELL_HEADER)
            line += 1
        cell_map.append(Cell(index, line, len(lines), text, masked, indented))
        parts.extend(lines)
        line += len(lines)
    return Source("\n".join(parts), path, cell_map)


INDENTED_CELL_HEADER = "if True:"


def _leading_indent(lines: list[str]) -> bool:
    """The cell's first non-blank line and its first line of code are indented (a comment alone is not a block)."""
    first = next((line for line in lines if line.strip()), None)
    code = next((line for line in lines if line.strip() and not line.lstrip().startswith("#")), None)
    return first is not None and code is not None and first[:1] in (" ", "\t") and code[:1] in (" ", "\t")


def read_source(path: str | Path) -> Source:
    # (a Path's text is already normalised; only a string is made a Path, once: pathlib per file was a measurable
    # share of a large run)
    path = os.fspath(path) if isinstance(path, Path) else str(Path(path))
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as error:
        raise SourceError(f"{path}: cannot read ({error.strerror})") from None
    if path.endswith(".ipynb"):
        return notebook_source(decode(data, path), path)
    return Source(normalise(decode_python(data, path)[0]), path)
