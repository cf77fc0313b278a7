"""Which of the facts the child found is *the* culprit, and how to say it in one sentence.

The child (``_child_instrument.py``) detects, in the order they happen:

* ``version`` — backward raised "modified by an inplace operation ... is at version N; expected
  version M": the in-place ops that bumped the saved tensor's storage from M to N (``bumps``, first
  is ``line``), the forward op that saved it (``saved_by``), the failing ``backward``;
* ``freed`` — "backward through the graph a second time": the earlier backward that freed the
  graph (``freed_by``, = ``line``) and the tensor that carries the old graph (``carrier``);
* ``inplace-on-leaf`` — an in-place op on a leaf that requires grad (``line``, ``op``, ``variable``);
* ``requires-grad-after-forward`` — ``requires_grad`` turned on (``line``) after the graph that is
  backpropagated was built (``graph_line``): those parameters get no gradient (silent);
* ``data-write`` — a tensor saved for backward was written through ``.data`` afterwards (``line``,
  ``op``, ``variable``): no version bump, so backward silently uses the new values (``saved_by``);
* ``stale-graph`` — a backward runs through a graph built from leaves that were modified in place
  since (``modified_by``, e.g. ``optimizer.step()``); ``carrier`` (= ``line``) is the tensor built
  before the change, e.g. a composed weight built once before the loop (silent unless saved).

Errors outrank silent findings; within a rank the first one found wins.
"""
from __future__ import annotations

_RANK = {"version": 0, "freed": 0, "inplace-on-leaf": 0, "requires-grad-after-forward": 1, "data-write": 1, "stale-graph": 2}


def _clean_message(text: str | None) -> str | None:
    """torch's message up to its first full stop that matters (the hints after it are torch's, not ours)."""
    if not text:
        return text
    for end in (" instead.", " a second time"):
        cut = text.find(end)
        if cut != -1:
            return text[: cut + len(end)] + ("" if end.endswith(".") else ".")
    return text


def primary(culprits: list[dict]) -> dict | None:
    if not culprits:
        return None
    return sorted(enumerate(culprits), key=lambda ic: (_RANK.get(ic[1]["kind"], 9), ic[0]))[0][1]


def tidy(culprits: list[dict]) -> list[dict]:
    out = []
    for c in culprits:
        c = dict(c)
        if "message" in c and c["kind"] in ("version", "freed"):
            c["message"] = _clean_message(c["message"])
        out.append(c)
    return out


def _at(line) -> str:
    return f"line {line}" if line else "an unknown line"


def sentence(c: dict, source_line=lambda n: "") -> str:
    """One sentence naming the statement to blame, e.g. for the LSP hover and the text output."""
    def code(line):
        from .render import _strip_comment

        text = _strip_comment(source_line(line).strip()) if line else ""
        return f" `{text}`" if text else ""

    kind = c["kind"]
    if kind == "version":
        tensor = (c.get("tensor") or {}).get("name") or "a saved tensor"
        saved = c.get("saved_by") or {}
        head = (f"{_at(c.get('line'))}{code(c.get('line'))} ({c.get('op')} on {c.get('variable') or tensor}) changed {tensor} "
                f"from version {c.get('version_expected')} to {c.get('version_now')}") if c.get("line") else \
            f"{tensor} was changed from version {c.get('version_expected')} to {c.get('version_now')} outside any watched torch call"
        return (f"{head} after {_at(saved.get('line'))}{code(saved.get('line'))} saved it for backward ({saved.get('op')}); "
                f"the backward at {_at((c.get('backward') or {}).get('line'))} needs the old value")
    if kind == "freed":
        carrier = c.get("carrier") or {}
        return (f"the backward at {_at((c.get('freed_by') or {}).get('line'))}{code((c.get('freed_by') or {}).get('line'))} freed the graph "
                f"that {carrier.get('name') or 'a tensor'} (built at {_at(carrier.get('line'))}{code(carrier.get('line'))}) still carries; "
                f"the backward at {_at((c.get('backward') or {}).get('line'))} goes through it a second time")
    if kind == "inplace-on-leaf":
        return (f"{_at(c.get('line'))}{code(c.get('line'))} modifies {c.get('variable') or 'a leaf'} in place ({c.get('op')}), "
                f"a leaf that requires grad")
    if kind == "requires-grad-after-forward":
        names = ", ".join(n for n in c.get("variables") or [] if n) or "parameters"
        return (f"{_at(c.get('line'))}{code(c.get('line'))} turns on requires_grad of {names} after the graph was built at "
                f"{_at(c.get('graph_line'))}; the backward at {_at((c.get('backward') or {}).get('line'))} gives them no gradient")
    if kind == "data-write":
        saved = c.get("saved_by") or {}
        return (f"{_at(c.get('line'))}{code(c.get('line'))} writes {c.get('variable') or 'a tensor'} through .data ({c.get('op')}) after "
                f"{_at(saved.get('line'))}{code(saved.get('line'))} saved it for backward ({saved.get('op')}); autograd cannot see it, "
                f"so the backward at {_at((c.get('backward') or {}).get('line'))} uses the new values")
    if kind == "stale-graph":
        carrier = c.get("carrier") or {}
        leaf = c.get("leaf") or {}
        mods = c.get("modified_by") or []
        by = f" by {_at(mods[0].get('line'))}{code(mods[0].get('line'))}" if mods else ""
        return (f"{carrier.get('name') or 'a tensor'} (built at {_at(carrier.get('line'))}{code(carrier.get('line'))}) still holds the graph of "
                f"{leaf.get('name') or 'a leaf'} at version {leaf.get('saved_version')}; {leaf.get('name') or 'it'} was changed{by} "
                f"to version {leaf.get('version')}, and the backward at {_at((c.get('backward') or {}).get('line'))} uses the stale graph")
    return c.get("message") or kind
