"""The parsing floor: a Python process that only reads and ``ast.parse``s every file it is given.

Usage: ``python bench/floor.py PATH...`` (directories are walked for .py and .ipynb; ``@list`` reads paths
from a file). Notebooks are joined the way the linter sees them (code cells, magics blanked). Standard
library only, so the floor is exactly interpreter start + I/O + parse.
"""
import ast
import json
import os
import sys


def _files(args):
    for arg in args:
        if arg.startswith("@"):
            with open(arg[1:]) as handle:
                yield from (line.strip() for line in handle if line.strip())
        elif os.path.isdir(arg):
            for root, dirs, names in os.walk(arg):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for name in sorted(names):
                    if name.endswith((".py", ".ipynb")):
                        yield os.path.join(root, name)
        else:
            yield arg


def _magic(line):
    stripped = line.lstrip()
    return stripped.startswith(("%", "!", "?")) or stripped.endswith("?") and not stripped.startswith("#")


def _text(path):
    with open(path, "rb") as handle:
        text = handle.read().decode("utf-8-sig")
    if path.endswith(".ipynb"):
        lines = []
        for cell in json.loads(text)["cells"]:
            if cell.get("cell_type") == "code":
                source = cell.get("source", "")
                source = "".join(source) if isinstance(source, list) else source
                lines.extend("" if _magic(l) else l for l in source.split("\n"))
        text = "\n".join(lines)
    return text


def main(args):
    files = lines = errors = 0
    for path in _files(args):
        text = _text(path)
        try:
            ast.parse(text, filename=path)
        except SyntaxError:
            errors += 1
        files += 1
        lines += text.count("\n") + 1
    print(f"{files} files, {lines} lines, {errors} syntax errors")


if __name__ == "__main__":
    main(sys.argv[1:])
