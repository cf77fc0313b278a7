"""The explain command: the autograd graph at a line and what broke it (autograd_lsp.explain), run as a job
(jobs.py: its own thread, cancellable progress, the child killed on cancel) only ever on this explicit request.

Arguments: [uri, line (0-based, in that document), device ("cpu" | "cuda", optional)]. Reply (a JSON object):

    {"status": "explained" | "not-run" | "timeout" | "torch-missing" | "cuda-unavailable" | "error"
               | "disabled" | "cancelled",
     "markdown": str,            # the tree, the culprit and the versions table: what every client can show
     "summary": str,             # one line (also shown as a message)
     "uri": str, "line": int,    # the document and 0-based line explained
     "culprit": {"uri", "line", "message"} | null,   # where the blame lies, in editor coordinates
     "locations": {"<analysed line>": [uri, 0-based line]},   # every line the graph mentions (click to jump)
     "svg": str, "dot": str, "graph": {...}}   # only those the client accepts (below)

A client that can draw says so in its capabilities, under `experimental` (LSP's place for extensions):

    "experimental": {"autogradLsp": {"explainFormats": ["svg", "dot", "json"]}}

"svg" is the server's own drawing (no Graphviz needed), "dot" the Graphviz source whose nodes carry
`URL="#L<line>"`, "json" the explanation document (schema in autograd_lsp/explain/__init__.py) as "graph".
Explaining runs the user's code, so it follows `confirm.enabled` (off in untrusted VS Code workspaces) and
confirm's timeout and interpreter."""
from __future__ import annotations

import ast
import textwrap
import traceback

from lsprotocol import types

from .jobs import JobCancelled, cancelled_with_request, run_job
from .settings import SECTION

CMD_EXPLAIN = "autograd-lsp.explain"
EXPLAIN_KIND = "refactor.explain.autograd-lsp"  # the plain action at a line (any backward, any tensor computed)
TITLE = "Explain autograd graph here"
FORMATS = ("svg", "dot", "json")
# runtime signatures (the rules' RUNTIME_SIGNATURE) whose failure explain's culprit names
EXPLAINED_SIGNATURES = ("modified by an inplace operation", "backward through the graph a second time")


def explains(signature: str) -> bool:
    """Whether a rule's runtime signature is one of the errors explain traces to its cause."""
    return any(part in signature for part in EXPLAINED_SIGNATURES)


def accepted_formats(ls) -> set[str]:
    experimental = getattr(ls.client_capabilities, "experimental", None)
    ours = experimental.get("autogradLsp") if isinstance(experimental, dict) else None
    formats = ours.get("explainFormats") if isinstance(ours, dict) else None
    return {f for f in formats if f in FORMATS} if isinstance(formats, list) else set()


def command(uri: str, line0: int, device: str = "cpu") -> types.Command:
    return types.Command(title=TITLE, command=CMD_EXPLAIN, arguments=[uri, line0, device])


def explainable_line(source, line: int) -> bool:
    """A line worth the plain action: its statement starts there and backpropagates, or assigns (or changes in
    place) something computed — not a literal — in a file that uses torch. Static and cheap: it runs on every
    code-action request, so it reads the statement's text only."""
    if "torch" not in source.text:
        return False
    from ..explain.runner import ExplainError, what_to_capture

    try:
        wanted = what_to_capture(source, line)
    except ExplainError:
        return False
    first, last = wanted["statement"]
    if first != line:
        return False
    if wanted["backward"]:
        return True
    if not wanted["targets"]:
        return False
    try:  # `n = 0`, `n += 1`, `names = ["a"]`: nothing autograd could follow
        statement = ast.parse(textwrap.dedent("\n".join(source.line_text(n) for n in range(first, last + 1)))).body[0]
        value = getattr(statement, "value", None)
        return value is None or not _literal(value)
    except (SyntaxError, ValueError, IndexError):
        return True  # a statement that only parses in context (a decorator's body...): let the run decide


def _literal(node: ast.AST) -> bool:
    try:
        ast.literal_eval(node)
        return True
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False


async def explain(ls, args) -> dict:
    if len(args) < 2 or not isinstance(args[1], int):
        ls.show_message(f"autograd-lsp: {CMD_EXPLAIN} needs [uri, line, device]", types.MessageType.Error)
        return {"status": "error", "markdown": "", "summary": "bad arguments"}
    with cancelled_with_request(ls):
        return await _explain(ls, str(args[0]), args[1], str(args[2]).lower() if len(args) > 2 and args[2] else ls.options.confirm_device)


def _fail(ls, status: str, summary: str, kind=types.MessageType.Warning) -> dict:
    ls.show_message(f"autograd-lsp: {summary}", kind)
    return {"status": status, "markdown": f"**autograd-lsp explain**: {summary}", "summary": summary}


async def _explain(ls, uri: str, line0: int, device: str) -> dict:
    if not ls.options.confirm_enabled:
        return _fail(ls, "disabled", f"explain runs your code and runtime runs are disabled ({SECTION}.confirm.enabled = false)")
    if device not in ("cpu", "cuda"):
        return _fail(ls, "error", f"device must be cpu or cuda, not {device!r}", types.MessageType.Error)
    unit = ls.unit_for(uri)
    analysis = await ls.current_analysis(unit) if unit is not None else None
    if analysis is None:
        return _fail(ls, "error", f"cannot explain: {uri} is not open")
    snap = analysis.snapshot
    line = snap.joined_line(uri, line0)
    if line is None:
        return _fail(ls, "error", f"cannot explain: line {line0 + 1} is not in {uri}")
    formats = accepted_formats(ls)
    cache_key = (analysis.content_hash, line, device, ls.options.python)
    result = ls.explanations.get(cache_key)
    if result is None:
        try:
            from ..explain import ExplainError, explain as run_explain
        except Exception as error:  # optional at run time: say so, do not crash
            return _fail(ls, "error", f"explain is not available: {type(error).__name__}: {error}", types.MessageType.Error)
        try:
            result = await run_job(ls, "autograd-lsp: explaining the autograd graph", f"running line {line0 + 1} on {device}…",
                                   run_explain, snap.source, line, device=device, timeout=ls.options.confirm_timeout,
                                   python=ls.options.python, cleanup_s=ls.options.confirm_timeout + 5)
        except JobCancelled:
            ls.show_message("autograd-lsp: explanation cancelled")
            return {"status": "cancelled", "markdown": "", "summary": "cancelled"}
        except ExplainError as error:
            return _fail(ls, "not-run", f"cannot explain line {line0 + 1}: {error}")
        except Exception as error:
            ls.log_message(f"explain failed:\n{traceback.format_exc()}", types.MessageType.Error)
            return _fail(ls, "error", f"explain failed: {type(error).__name__}: {error}", types.MessageType.Error)
        if result.doc.get("status") not in ("timeout", "error"):
            ls.explanations[cache_key] = result
            while len(ls.explanations) > 16:  # each holds a program's graph: keep the recent ones only
                ls.explanations.pop(next(iter(ls.explanations)))
    reply = _reply(result, snap, uri, line0, formats)
    ls.show_message(f"autograd-lsp: {reply['summary']}", types.MessageType.Info if reply["status"] == "explained" else types.MessageType.Warning)
    return reply


def _lines(value, out: set[int]) -> set[int]:
    """Every user line the document mentions (keys "line" and "lines", at any depth)."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "line" and isinstance(item, int) and not isinstance(item, bool):
                out.add(item)
            elif key == "lines" and isinstance(item, list):
                out.update(i for i in item if isinstance(i, int) and not isinstance(i, bool))
            else:
                _lines(item, out)
    elif isinstance(value, list):
        for item in value:
            _lines(item, out)
    return out


def _summary(doc: dict, line0: int) -> str:
    culprit = doc.get("culprit")
    if doc.get("status") != "explained":
        return f"line {line0 + 1} not explained ({doc.get('status')}): {doc.get('observed') or 'no reason given'}"
    if culprit:
        where = f"line {culprit['line']}" if culprit.get("line") else "an unknown line"
        return f"explained line {line0 + 1}: the culprit is {where}: {culprit.get('message', '')}".rstrip(": ")
    return f"explained line {line0 + 1}: a clean graph ({len(doc['graph']['nodes'])} nodes)"


def _reply(result, snap, uri: str, line0: int, formats: set[str]) -> dict:
    doc = result.doc
    locations = {}
    for line in sorted(_lines(doc, set())):
        place = snap.locate(line) if 1 <= line <= len(snap.source.lines) else None
        if place is not None:
            locations[str(line)] = [place.uri, place.line]
    culprit = doc.get("culprit")
    culprit_place = locations.get(str(culprit.get("line"))) if culprit else None
    reply = {
        "status": doc.get("status"), "markdown": result.to_markdown(), "summary": _summary(doc, line0),
        "uri": uri, "line": line0, "locations": locations,
        "culprit": {"uri": culprit_place[0], "line": culprit_place[1], "message": culprit.get("message")} if culprit_place else None,
    }
    if "svg" in formats:
        reply["svg"] = result.to_svg()
    if "dot" in formats:
        reply["dot"] = result.to_dot()
    if "json" in formats:
        reply["graph"] = doc
    return reply
