"""Render an explanation document (see ``autograd_lsp.explain``): text, markdown, dot, svg.

The SVG is laid out here (layers by depth from the roots, one pass of barycentre ordering), so no
Graphviz binary is needed; the VS Code panel renders the dot with a WebAssembly Graphviz instead.
Every node carries its user line (``data-line`` in SVG, ``URL="#L<line>"`` in dot) for click-to-source.
"""
from __future__ import annotations

import html
import json

from . import culprit as _culprit

MAX_DEPTH = 40


# --------------------------------------------------------------------------------------------
# Labels
# --------------------------------------------------------------------------------------------
def _shape(shape) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]" if shape is not None else "?"


def _saved_text(s: dict) -> str:
    if s["state"] == "modified":
        return f"saved {s['attr']} at v{s['saved_version']}, now v{s['version']} ✗ MODIFIED"
    if s["state"] == "freed":
        return f"saved {s['attr']} ✗ FREED (by an earlier backward)"
    return f"saved {s['attr']} {_shape(s['shape'])} v{s['saved_version']}"


def node_title(node: dict) -> str:
    kind = node["kind"]
    if kind == "leaf":
        flags = "requires_grad" if node.get("requires_grad") else "no grad"
        grad = "grad set" if node.get("grad") else "grad None"
        made = f", made at line {node['line']}" if node.get("line") else ""
        return (f"{node.get('name') or '(unnamed leaf)'}  leaf {_shape(node.get('shape'))} {node.get('dtype')} "
                f"{flags} v{node.get('version')} {grad}{made}")
    if kind == "repeat":
        return f"{node['name']}  ⋯ {node['count']} layers folded ({', '.join(node['ops'])}; {node['params']} parameters)"
    parts = []
    if node.get("module"):
        parts.append(f"{node['module'].get('name') or '?'} ({node['module']['cls']})")
    if node.get("name") and (not node.get("module") or node["name"] != node["module"].get("name")):
        parts.append(node["name"])
    where = f"line {node['line']}" if node.get("line") else "line ?"
    ops = ", ".join(node.get("ops") or [])
    return "  ".join(parts + [where, ops])


def _strip_comment(code: str) -> str:
    """The statement without its trailing comment (a `#` outside quotes)."""
    quote = None
    for i, ch in enumerate(code):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "#":
            return code[:i].rstrip()
    return code


def _short_title(node: dict) -> str:
    """A compact label for pictures: name, op summary, line."""
    if node["kind"] == "leaf":
        return node.get("name") or "leaf"
    if node["kind"] == "repeat":
        return f"{node['name']} (×{node['count']})"
    head = node.get("name") or ((node.get("module") or {}).get("name")) or ", ".join((node.get("ops") or [])[:2])
    return head


def _sub_title(node: dict) -> str:
    if node["kind"] == "leaf":
        return f"{_shape(node.get('shape'))} v{node.get('version')} {'grad' if node.get('grad') else 'no grad'}"
    if node["kind"] == "repeat":
        return ", ".join(node["ops"])
    module = node.get("module")
    ops = f"{module['cls']}" if module else ", ".join(node.get("ops") or [])
    line = f"L{node['line']}" if node.get("line") else ""
    return f"{ops}  {line}".strip()


# --------------------------------------------------------------------------------------------
# Tree walk shared by text and markdown
# --------------------------------------------------------------------------------------------
def _children(doc: dict) -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for a, b in doc["graph"]["edges"]:
        out.setdefault(a, []).append(b)
    return out


def _roots(doc: dict) -> list[int]:
    graph = doc["graph"]
    roots = [t["node"] for t in doc.get("targets", []) if t.get("node") is not None]
    if not roots and graph["nodes"]:
        inputs = {b for _, b in graph["edges"]}
        roots = [n["id"] for n in graph["nodes"] if n["id"] not in inputs][:4]
    return list(dict.fromkeys(roots))


def tree_lines(doc: dict, source_line=lambda n: "") -> list[str]:
    graph = doc["graph"]
    by_id = {n["id"]: n for n in graph["nodes"]}
    children = _children(doc)
    lines: list[str] = []
    shown: set[int] = set()

    def emit(node_id: int, prefix: str, last: bool, depth: int, top: bool):
        node = by_id[node_id]
        branch = "" if top else ("└── " if last else "├── ")
        title = node_title(node)
        if node_id in shown:
            lines.append(f"{prefix}{branch}{_short_title(node)} (shown above)")
            return
        shown.add(node_id)
        code = source_line(node.get("line")).strip() if node["kind"] in ("op", "module") and node.get("line") else ""
        lines.append(f"{prefix}{branch}{title}" + (f"   `{_strip_comment(code)}`" if code else ""))
        inner = prefix + ("" if top else ("    " if last else "│   "))
        kids = children.get(node_id, [])
        note = inner + ("│   " if kids else "    ")
        for s in node.get("saved") or ():
            if s["state"] in ("modified", "freed"):
                lines.append(f"{note}! {s.get('op')}: {_saved_text(s)}")
        for cut in node.get("cuts") or ():
            what = cut.get("name") or (f"{cut['of']}.detach()" if cut["kind"] == "detach" and cut.get("of") else
                                       f"{cut['of']}.data" if cut["kind"] == ".data" and cut.get("of") else "a tensor")
            lines.append(f"{note}✂ {what} {_shape(cut.get('shape'))}: graph cut by {cut['kind']}"
                         + (f" at line {cut['line']}" if cut.get("line") else ""))
        if node.get("consts"):
            lines.append(f"{note}· no grad: " + ", ".join(f"{c['name']} {_shape(c['shape'])}" for c in node["consts"]))
        if depth >= MAX_DEPTH and kids:
            lines.append(f"{inner}└── … {len(kids)} more")
            return
        for i, kid in enumerate(kids):
            emit(kid, inner, i == len(kids) - 1, depth + 1, False)

    for root in _roots(doc):
        emit(root, "", True, 0, True)
    for target in doc.get("targets", []):
        if target.get("node") is None:
            if target.get("leaf"):
                leaf = dict(target["leaf"], kind="leaf")
                lines.append(node_title(leaf))
            elif target.get("cut"):
                cut = target["cut"]
                lines.append(f"{target['expr']}: no graph (cut by {cut['kind']} at line {cut.get('line')})")
            else:
                lines.append(f"{target['expr']}: does not require grad (no graph)")
    return lines


def versions_table(doc: dict) -> tuple[list[str], list[list[str]]]:
    versions = doc.get("versions") or {}
    leaves = versions.get("leaves") or []
    header = ["after", "line"] + [leaf.get("name") or f"leaf {i}" for i, leaf in enumerate(leaves)]
    rows = []
    for row in versions.get("rows") or []:
        cells = [f"v{v} {'grad' if g else '-'}" for v, g in row["cells"]]
        cells += [""] * (len(leaves) - len(cells))
        rows.append([row["event"], str(row.get("line") or "")] + cells)
    return header, rows


def _table_text(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in [header] + rows) for i in range(len(header))]
    fmt = lambda r: "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip()
    return [fmt(header)] + [fmt(r) for r in rows]


def _culprit_details(c: dict) -> list[str]:
    out = []
    if c["kind"] == "version":
        for b in c.get("bumps") or ():
            out.append(f"bumped by: line {b.get('line')} {b.get('op')} on {b.get('variable') or '?'}: v{b.get('from')} → v{b.get('to')}")
        saved = c.get("saved_by") or {}
        out.append(f"saved by:  line {saved.get('line')} {saved.get('op')} ({saved.get('attr')})")
        out.append(f"failed:    line {(c.get('backward') or {}).get('line')} backward")
    elif c["kind"] == "freed":
        out.append(f"freed by:  line {(c.get('freed_by') or {}).get('line')} backward")
        out.append(f"old graph: {(c.get('carrier') or {}).get('name')} from line {(c.get('carrier') or {}).get('line')}")
        out.append(f"failed:    line {(c.get('backward') or {}).get('line')} backward")
    elif c["kind"] == "stale-graph":
        for b in (c.get("modified_by") or [])[:4]:
            out.append(f"changed by: line {b.get('line')} {b.get('op')} on {b.get('variable') or '?'}: v{b.get('from')} → v{b.get('to')}")
    if c.get("note"):
        out.append(f"note: {c['note']}")
    return out


def _header(doc: dict, source_line) -> list[str]:
    stmt = source_line(doc.get("line")).strip()
    out = [f"autograd-lsp explain {doc.get('path') or '<buffer>'}:{doc.get('line')}" + (f"  `{stmt}`" if stmt else "")]
    run = doc.get("run") or {}
    bits = [f"ran on {doc.get('device')}" + (f" (torch {doc['torch_version']})" if doc.get("torch_version") else ""),
            f"{run.get('mode')} mode" if run.get("mode") else None,
            f"{run.get('duration_s', 0):.1f} s"]
    cap = doc.get("capture") or {}
    if cap:
        bits.append(f"the line ran {cap.get('executions')} time(s), graph of run {cap.get('execution')} ({cap.get('how')})")
    out.append("; ".join(b for b in bits if b))
    if doc.get("status") != "explained":
        out.append(f"{doc.get('status')}: {doc.get('observed')}")
    elif doc.get("observed"):
        out.append(f"raised at line {doc.get('exception_line')}: {doc['observed']}")
    return out


def _graph_heading(doc: dict) -> str:
    graph = doc["graph"]
    shown = len(graph["nodes"])
    how = "collapsed to your lines and modules; --expand shows every node" if graph.get("collapsed") else "expanded"
    return f"Graph ({graph.get('raw_nodes', shown)} autograd nodes, {shown} shown; {how}):"


def to_text(doc: dict, source_line=lambda n: "") -> str:
    out = _header(doc, source_line)
    out.append("")
    main = doc.get("culprit")
    if main:
        out.append("Culprit: " + _culprit.sentence(main, source_line))
        out += ["  " + line for line in _culprit_details(main)]
    elif doc.get("status") == "explained":
        out.append("Clean: no in-place change, freed graph, late requires_grad or stale leaf found in this run.")
    others = [c for c in doc.get("culprits") or [] if c is not main]
    if others:
        out.append("Also found:")
        out += [f"  - {_culprit.sentence(c, source_line)}" for c in others[:6]]
    if doc.get("graph", {}).get("nodes") or doc.get("targets"):
        out.append("")
        out.append(_graph_heading(doc))
        out += tree_lines(doc, source_line)
    elif doc.get("status") == "explained":
        out.append("")
        out.append("No graph: the line did not run, or computes no tensor.")
    header, rows = versions_table(doc)
    if rows:
        out.append("")
        out.append("Versions across steps (_version, and whether .grad is set):")
        out += ["  " + line for line in _table_text(header, rows)]
    for note in doc.get("notes") or ():
        out.append(f"note: {note}")
    return "\n".join(out) + "\n"


def to_markdown(doc: dict, source_line=lambda n: "", svg: bool = False) -> str:
    """Markdown for the LSP command and hover: culprit, the tree in a code block, the versions table."""
    head = _header(doc, source_line)
    out = [f"**{head[0]}**", "", head[1]]
    if len(head) > 2:
        out += ["", head[2]]
    out.append("")
    main = doc.get("culprit")
    if main:
        out.append("**Culprit:** " + _culprit.sentence(main, source_line))
        out += [f"- {line}" for line in _culprit_details(main)]
    elif doc.get("status") == "explained":
        out.append("**Clean:** no in-place change, freed graph, late `requires_grad` or stale leaf found in this run.")
    others = [c for c in doc.get("culprits") or [] if c is not main]
    if others:
        out += ["", "**Also found:**"] + [f"- {_culprit.sentence(c, source_line)}" for c in others[:6]]
    if doc.get("graph", {}).get("nodes") or doc.get("targets"):
        out += ["", _graph_heading(doc), "", "```text", *tree_lines(doc, source_line), "```"]
    header, rows = versions_table(doc)
    if rows:
        out += ["", "**Versions across steps** (`_version`, and whether `.grad` is set):", "",
                "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        out += ["| " + " | ".join(r) + " |" for r in rows]
    if svg and doc.get("graph", {}).get("nodes"):
        out += ["", to_svg(doc)]
    return "\n".join(out) + "\n"


def to_json(doc: dict) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False)


# --------------------------------------------------------------------------------------------
# dot and svg
# --------------------------------------------------------------------------------------------
def _style(node: dict) -> tuple[str, str]:
    """(fill, stroke)"""
    if node.get("problem"):
        return "#fde2e1", "#c62828"
    if node["kind"] == "leaf":
        return ("#e3f2e1", "#2e7d32") if node.get("requires_grad") else ("#eeeeee", "#777777")
    if node["kind"] == "repeat":
        return "#f3eefc", "#6a4fb3"
    if node["kind"] == "module":
        return "#e6effb", "#1f5fa8"
    return "#ffffff", "#555555"


def _dot_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def to_dot(doc: dict) -> str:
    out = ["digraph autograd {", '  rankdir=TB; node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=11];',
           '  edge [color="#888888", arrowsize=0.6];']
    for node in doc["graph"]["nodes"]:
        fill, stroke = _style(node)
        rows = [_short_title(node), _sub_title(node)]
        for s in node.get("saved") or ():
            if s["state"] in ("modified", "freed"):
                rows.append("saved %s v%s→v%s" % (s["attr"], s["saved_version"], s["version"]) if s["state"] == "modified" else "saved %s freed" % s["attr"])
        label = "\\n".join(_dot_escape(row) for row in rows)  # escape each row, not dot's own line breaks
        attrs = [f'label="{label}"', f'fillcolor="{fill}"', f'color="{stroke}"', f'tooltip="{_dot_escape(node_title(node))}"']
        if node.get("line"):
            attrs.append(f'URL="#L{node["line"]}"')
        if node["kind"] == "leaf":
            attrs.append("shape=ellipse")
        out.append(f"  n{node['id']} [{', '.join(attrs)}];")
        for i, cut in enumerate(node.get("cuts") or ()):
            out.append(f'  c{node["id"]}_{i} [label="{_dot_escape((cut.get("name") or "tensor") + " ✂ " + cut["kind"])}", '
                       f'shape=note, style="dashed", color="#777777"];')
            out.append(f'  n{node["id"]} -> c{node["id"]}_{i} [style=dashed];')
    for a, b in doc["graph"]["edges"]:
        out.append(f"  n{a} -> n{b};")
    out.append("}")
    return "\n".join(out) + "\n"


def _problem_text(node: dict) -> str:
    for s in node.get("saved") or ():
        if s["state"] == "modified":
            return f"saved {s['attr']} v{s['saved_version']}, now v{s['version']}"
        if s["state"] == "freed":
            return f"saved {s['attr']} freed"
    return ""


def layout(doc: dict) -> dict:
    """Layered positions: {"nodes": {id: (x, y, w, h)}, "width", "height"}."""
    nodes = {n["id"]: n for n in doc["graph"]["nodes"]}
    children = _children(doc)
    depth: dict[int, int] = {}
    roots = _roots(doc) or list(nodes)[:1]
    order = []
    stack = [(r, 0) for r in reversed(roots)]
    # longest-path depth (the graph is a DAG): relax in BFS order, bounded
    for r in roots:
        depth[r] = 0
    frontier = list(roots)
    steps = 0
    while frontier and steps < 200000:
        nxt = []
        for n in frontier:
            for c in children.get(n, []):
                steps += 1
                if depth.get(c, -1) < depth[n] + 1 and depth[n] + 1 < len(nodes) + 1:
                    depth[c] = depth[n] + 1
                    nxt.append(c)
        frontier = nxt
    for n in nodes:
        depth.setdefault(n, 0)
    seen = set()
    while stack:
        n, _ = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        order.append(n)
        for c in reversed(children.get(n, [])):
            stack.append((c, 0))
    order += [n for n in nodes if n not in seen]
    layers: dict[int, list[int]] = {}
    for n in order:
        layers.setdefault(depth[n], []).append(n)
    widths = {n: max(len(_short_title(nodes[n])), len(_sub_title(nodes[n])), len(_problem_text(nodes[n]))) * 7 + 24 for n in nodes}
    height, gap_x, gap_y = 58, 18, 40
    pos: dict[int, tuple[float, float, float, float]] = {}
    parents: dict[int, list[int]] = {}
    for a, b in doc["graph"]["edges"]:
        parents.setdefault(b, []).append(a)
    total_w = 0.0
    for level in sorted(layers):
        row = layers[level]
        if level > 0:  # barycentre of the parents' x
            row.sort(key=lambda n: sum(pos[p][0] for p in parents.get(n, []) if p in pos) / max(1, len([p for p in parents.get(n, []) if p in pos])))
        x = 10.0
        for n in row:
            pos[n] = (x, 10.0 + level * (height + gap_y), widths[n], height)
            x += widths[n] + gap_x
        total_w = max(total_w, x)
    # centre each row
    for level, row in layers.items():
        row_w = sum(widths[n] + gap_x for n in row)
        shift = (total_w - row_w) / 2
        for n in row:
            x, y, w, h = pos[n]
            pos[n] = (x + shift, y, w, h)
    return {"nodes": pos, "width": total_w + 10, "height": 10 + (max(layers) + 1 if layers else 1) * (height + gap_y)}


def to_svg(doc: dict) -> str:
    placed = layout(doc)
    nodes = {n["id"]: n for n in doc["graph"]["nodes"]}
    pos = placed["nodes"]
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{placed["width"]:.0f}" height="{placed["height"]:.0f}" '
           f'viewBox="0 0 {placed["width"]:.0f} {placed["height"]:.0f}" font-family="Helvetica, Arial, sans-serif" font-size="12">',
           '<rect width="100%" height="100%" fill="#fafafa"/>']
    for a, b in doc["graph"]["edges"]:
        if a not in pos or b not in pos:
            continue
        xa, ya, wa, ha = pos[a]
        xb, yb, wb, hb = pos[b]
        x1, y1, x2, y2 = xa + wa / 2, ya + ha, xb + wb / 2, yb
        mid = (y1 + y2) / 2
        out.append(f'<path d="M{x1:.1f},{y1:.1f} C{x1:.1f},{mid:.1f} {x2:.1f},{mid:.1f} {x2:.1f},{y2:.1f}" fill="none" stroke="#999" stroke-width="1.2"/>')
    for n, (x, y, w, h) in pos.items():
        node = nodes[n]
        fill, stroke = _style(node)
        rx = h / 2 if node["kind"] == "leaf" else 6
        line = node.get("line") or ""
        out.append(f'<g class="node {node["kind"]}" data-id="{n}" data-line="{line}"><title>{html.escape(node_title(node))}</title>')
        out.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h}" rx="{rx:.1f}" fill="{fill}" stroke="{stroke}" stroke-width="{2 if node.get("problem") else 1.2}"/>')
        out.append(f'<text x="{x + w / 2:.1f}" y="{y + 18:.1f}" text-anchor="middle" font-weight="bold">{html.escape(_short_title(node))}</text>')
        out.append(f'<text x="{x + w / 2:.1f}" y="{y + 34:.1f}" text-anchor="middle" fill="#444">{html.escape(_sub_title(node))}</text>')
        problem = _problem_text(node)
        if problem:
            out.append(f'<text x="{x + w / 2:.1f}" y="{y + 50:.1f}" text-anchor="middle" fill="#c62828">{html.escape(problem)}</text>')
        out.append("</g>")
    out.append("</svg>")
    return "\n".join(out) + "\n"
