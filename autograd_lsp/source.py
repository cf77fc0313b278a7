"""Source text as the analyzer sees it: decoding, notebooks joined into one program, position maps."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path


class SourceError(Exception):
    """A file that cannot be read as Python (bad encoding, broken notebook JSON)."""


@dataclass(frozen=True)
class Cell:
    index: int  # 0-based position among all cells of the notebook
    first_line: int  # 1-based line of the cell's first line in the joined program
    line_count: int


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


def decode(data: bytes, path: str | None = None) -> str:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        where = f"{path}: " if path else ""
        raise SourceError(f"{where}not valid UTF-8 (byte {error.start}); autograd-lsp reads UTF-8 source only") from None
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _blank_magic(line: str) -> str:
    # IPython magics and shell escapes are not Python; keep the line (positions) but drop its text.
    stripped = line.lstrip()
    if stripped.startswith(("%", "!", "?")) or stripped.endswith("?") and not stripped.startswith("#"):
        return ""
    return line


def notebook_source(raw: str, path: str | None = None) -> Source:
    try:
        notebook = json.loads(raw)
        cells_json = notebook["cells"]
    except (ValueError, KeyError, TypeError):
        raise SourceError(f"{path or 'notebook'}: not a valid .ipynb notebook (JSON with a 'cells' list)") from None
    return join_cells(
        [(i, _cell_text(cell)) for i, cell in enumerate(cells_json) if isinstance(cell, dict) and cell.get("cell_type") == "code"],
        path,
    )


def _cell_text(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def join_cells(cells: list[tuple[int, str]], path: str | None = None) -> Source:
    """Join code cells (index, text) into one program; magics become blank lines."""
    parts: list[str] = []
    cell_map: list[Cell] = []
    line = 1
    for index, text in cells:
        lines = [_blank_magic(l) for l in text.replace("\r\n", "\n").split("\n")]
        cell_map.append(Cell(index, line, len(lines)))
        parts.extend(lines)
        line += len(lines)
    return Source("\n".join(parts), path, cell_map)


def read_source(path: str | Path) -> Source:
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as error:
        raise SourceError(f"{path}: cannot read ({error.strerror})") from None
    text = decode(data, str(path))
    if path.suffix == ".ipynb":
        return notebook_source(text, str(path))
    return Source(text, str(path))
