"""The graph model: the child's raw grad_fn nodes collapsed to the user's own lines and modules.

Raw nodes come from ``_child_instrument.py`` (one per autograd node, in breadth-first order from the
roots). Collapsing, unless ``expand``:

* ops inside one call of a library module (``nn.Linear``, ``nn.MSELoss``; containers such as
  ``nn.Sequential`` are transparent) become one node named after the module (``model.fc``);
* the other ops become one node per user line and call (``loss = -(t * p.log()).mean()`` is one
  node, not seven): groups are runs of consecutive nodes in creation order, so the result stays
  acyclic (every edge goes from a later group to an earlier one);
* a run of numbered layers (``model.layers.3``…) longer than ``2 * KEEP + 1`` keeps its first and
  last ``KEEP`` layers and folds the middle into one ``repeat`` node (their parameters are counted,
  not drawn), unless a saved tensor in the middle was modified or freed.

Pure Python on the child's JSON: no torch here.
"""
from __future__ import annotations

import re
from collections import Counter

KEEP = 2
_NUMBERED = re.compile(r"^(.*?)\.(\d+)(?:\.|$)")


def _short(op: str) -> str:
    return re.sub(r"Backward\d*$", "", op or "?")


def _layer_module(raw: dict) -> dict | None:
    for module in raw.get("modules") or ():
        if not module["user"] and not module["container"]:
            return module
    return None


def _numbered(raw: dict) -> tuple[str, int] | None:
    for module in raw.get("modules") or ():
        match = _NUMBERED.match(module.get("name") or "")
        if match:
            return match.group(1), int(match.group(2))
    return None


def _problem(saved: list[dict]) -> bool:
    return any(s["state"] in ("modified", "freed") for s in saved)


def _inherit(nodes: list[dict], edges: list[list[int]]) -> None:
    """Nodes the mode did not see (inside composite functions) take their consumer's line and modules."""
    parents: dict[int, list[int]] = {}
    for a, b in edges:
        parents.setdefault(b, []).append(a)
    by_id = {n["id"]: n for n in nodes}
    for node in nodes:  # breadth-first: a consumer comes before its inputs
        if node["kind"] != "op" or node.get("tagged"):
            continue
        for p in parents.get(node["id"], []):
            parent = by_id[p]
            if parent["kind"] == "op" and parent.get("line") is not None:
                for key in ("line", "stack", "modules", "seq"):
                    node[key] = parent.get(key)
                node["inner"] = True
                break


def build(raw: dict, expand: bool = False) -> dict:
    """{"nodes": [...], "edges": [[consumer, input], ...], "collapsed": bool, "raw_nodes": n}."""
    nodes = [dict(n) for n in raw.get("nodes", [])]
    edges = [list(e) for e in raw.get("edges", [])]
    _inherit(nodes, edges)
    ops = [n for n in nodes if n["kind"] == "op"]
    leaves = [n for n in nodes if n["kind"] != "op"]
    # creation order; breadth-first index breaks ties (a consumer before its inner inputs)
    ops.sort(key=lambda n: (-(n.get("seq") or 0), n["id"]))
    ops.reverse()
    groups: list[list[dict]] = []
    last_key = None
    for node in ops:
        if expand:
            key = ("node", node["id"])
        else:
            module = _layer_module(node)
            key = ("module", module["call"]) if module else ("line", tuple(map(tuple, node.get("stack") or ())) or node.get("line"))
        if groups and key == last_key:
            groups[-1].append(node)
        else:
            groups.append([node])
        last_key = key
    owner: dict[int, int] = {}
    out_nodes: list[dict] = []
    for index, members in enumerate(groups):
        out_nodes.append(_group_node(index, members, expand))
        for m in members:
            owner[m["id"]] = index
    base = len(out_nodes)
    for i, leaf in enumerate(leaves):
        owner[leaf["id"]] = base + i
        out_nodes.append(_leaf_node(base + i, leaf))
    out_edges = []
    seen = set()
    for a, b in edges:
        ga, gb = owner.get(a), owner.get(b)
        if ga is None or gb is None or ga == gb or (ga, gb) in seen:
            continue
        seen.add((ga, gb))
        out_edges.append([ga, gb])
    graph = {"nodes": out_nodes, "edges": out_edges, "collapsed": not expand, "raw_nodes": len(nodes),
             "truncated": bool(raw.get("truncated"))}
    if not expand:
        graph = _fold_repeats(graph, groups)
    return graph


def _group_node(index: int, members: list[dict], expand: bool) -> dict:
    top = max(members, key=lambda m: ((m.get("seq") or 0), -m["id"]))
    named = [m for m in members if m.get("name")]
    name_node = max(named, key=lambda m: ((m.get("seq") or 0), -m["id"])) if named else None
    module = _layer_module(top)
    counts = Counter(_short(m["op"]) for m in sorted(members, key=lambda m: m["id"]))
    ops = [f"{op} ×{n}" if n > 1 else op for op, n in counts.items()]
    saved = []
    for m in members:
        for s in m.get("saved") or ():
            saved.append(dict(s, op=_short(m["op"]), line=m.get("line")))
    lines = sorted({m.get("line") for m in members if m.get("line")})
    node = {
        "id": index, "kind": "module" if module else "op",
        "op": _short(top["op"]) if len(members) == 1 else None,
        "ops": ops, "name": name_node["name"] if name_node else None,
        "name_line": name_node.get("name_line") if name_node else None,
        "line": top.get("line"), "lines": lines, "stack": top.get("stack"),
        "module": {"name": module["name"], "cls": module["cls"]} if module else None,
        "saved": saved, "problem": _problem(saved),
        "freed_by": next((m["freed_by"] for m in members if m.get("freed_by") is not None), None),
        "cuts": [c for m in members for c in m.get("cuts") or ()],
        "consts": [c for m in members for c in m.get("consts") or ()][:6],
        "members": [m["id"] for m in members], "numbered": _numbered(top),
    }
    return node


def _leaf_node(index: int, leaf: dict) -> dict:
    node = {k: leaf.get(k) for k in ("name", "shape", "dtype", "requires_grad", "is_leaf", "version", "grad", "param", "line", "device")}
    node.update(id=index, kind="leaf", members=[leaf["id"]])
    return node


def _fold_repeats(graph: dict, groups: list[list[dict]]) -> dict:
    nodes = graph["nodes"]
    ops = [n for n in nodes if n["kind"] in ("op", "module")]
    folded: dict[int, int] = {}  # node id -> repeat node id
    repeats: list[dict] = []
    run: list[dict] = []

    def flush():
        indices = sorted({n["numbered"][1] for n in run})
        if len(indices) > 2 * KEEP + 1:
            keep = set(indices[:KEEP] + indices[-KEEP:])
            middle = [n for n in run if n["numbered"][1] not in keep]
            if middle:
                repeats.append(_repeat(middle, run[0]["numbered"][0]))
                for n in middle:
                    folded[n["id"]] = -len(repeats)

    for node in ops:  # in creation order (forward order)
        numbered = node.get("numbered")
        if numbered and not node["problem"] and run and run[-1]["numbered"][0] == numbered[0]:
            run.append(node)
            continue
        if run:
            flush()
        run = [node] if numbered and not node["problem"] else []
    if run:
        flush()
    if not repeats:
        return graph
    # leaves only used by folded groups go with them
    consumers: dict[int, set[int]] = {}
    for a, b in graph["edges"]:
        consumers.setdefault(b, set()).add(a)
    for node in nodes:
        if node["kind"] == "leaf":
            users = consumers.get(node["id"], set())
            marks = {folded.get(u) for u in users}
            if users and None not in marks and len(marks) == 1:
                rep = repeats[-next(iter(marks)) - 1]
                rep["params"] += 1
                folded[node["id"]] = next(iter(marks))
    kept = [n for n in nodes if n["id"] not in folded]
    new_id = {n["id"]: i for i, n in enumerate(kept)}
    for i, rep in enumerate(repeats):
        new_id[-(i + 1)] = len(kept) + i
    out_nodes = []
    for n in kept:
        out_nodes.append(dict(n, id=new_id[n["id"]]))
    for i, rep in enumerate(repeats):
        out_nodes.append(dict(rep, id=len(kept) + i))
    edges, seen = [], set()
    for a, b in graph["edges"]:
        ga = new_id[folded.get(a, a)] if folded.get(a, a) in new_id else None
        gb = new_id[folded.get(b, b)] if folded.get(b, b) in new_id else None
        if ga is None or gb is None or ga == gb or (ga, gb) in seen:
            continue
        seen.add((ga, gb))
        edges.append([ga, gb])
    return dict(graph, nodes=out_nodes, edges=edges)


def _repeat(middle: list[dict], prefix: str) -> dict:
    indices = sorted({n["numbered"][1] for n in middle})
    classes = Counter((n["module"] or {}).get("cls") or "ops" for n in middle)
    lines = sorted({l for n in middle for l in n["lines"]})
    return {
        "kind": "repeat", "name": f"{prefix}.{indices[0]}…{prefix}.{indices[-1]}",
        "count": len(indices), "ops": [f"{cls} ×{n}" for cls, n in classes.items()],
        "line": middle[-1]["line"], "lines": lines, "module": None, "saved": [], "problem": False,
        "cuts": [], "consts": [], "params": 0, "members": [m for n in middle for m in n["members"]],
    }
