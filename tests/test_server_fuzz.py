"""A bounded, seeded fuzz of the server over raw stdio: random edits (characters, half-typed code, unusual
characters and line breaks, huge lines), random positions for hover, code actions and requests the server
does not offer, commands, cancellations, and invalid messages. Every request must be answered and the process
must stay alive; at the end the server's diagnostics must equal the CLI's findings on the same text.

Deterministic: one seed, one sequence of operations (the server's timing may differ, the outcome may not)."""
from __future__ import annotations

import ast
import json
import random
import re
import subprocess
import sys

from raw_lsp import WAIT, RawServer

SEED = 20261201
OPERATIONS = 300
CHECK_EVERY = 25  # operations between waits for every outstanding response

BASE = (
    "import torch\n"
    "import torch.nn.functional as F\n"
    "\n"
    "w = torch.randn(3, 3, requires_grad=True)\n"
    "b = torch.zeros(3, requires_grad=True)\n"
    "x = torch.tensor([1, 2, 3], requires_grad=True)\n"
    "opt = torch.optim.SGD([w, b], lr=0.1)\n"
    "for step in range(10):\n"
    "    y = (w @ torch.ones(3) + b).sum()\n"
    "    y.backward()\n"
    "    w += 1\n"
    "    opt.step()\n"
    "total = 0\n"
    "for i in range(3):\n"
    "    loss = (w * 2).sum()\n"
    "    total += loss\n"
    "b.data.add_(1)\n"
)
PIECES = [
    "a", "w", "x", " ", "  ", "    ", "\n", "\r\n", "\r", "(", ")", "[", "]", ":", ",", ".", "=", "+=", "#", "'", '"',
    "\\", "@", "torch.", "requires_grad=True", ".add_(1)", ".backward()", ".detach()", "with torch.no_grad():\n    ",
    "def f(", "class M(torch.nn.Module):\n    ", "lambda", "'''", "f'{", "x = torch.ones(2, requires_grad=True",
    "for i in range(", "if ", "else", "é", "😀", "\u0301", "\ufeff", "\x00", "\x0c", "\x0b", "\x85", "\u2028",
    "\udcff",  # a lone (low) surrogate: JSON can carry it, UTF-8 cannot
]
HUGE = [
    lambda rng: "# " + "x" * 100_000 + "\n",
    lambda rng: "s = '" + "é😀" * 20_000 + "'\n",
    lambda rng: "t = " + " + ".join(["w"] * 300) + "\n",
    lambda rng: "u = " + "(" * 50 + "w" + ")" * 50 + "\n",
]
BAD_MESSAGES = [
    b'{"jsonrpc": "2.0", "id": 1, "method": ', b"\xff\xfe\x00", b"[1, 2, 3]", b"42", b'"text"', b"null", b"{}",
    b'{"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": 5}}',
    b'{"jsonrpc": "2.0", "method": "$/unknownNotification", "params": {}}',
]


# -- positions, written from the LSP spec (line breaks are \n, \r\n and \r; UTF-16 code units) -------------
LINE_BREAK = re.compile(r"\r\n|\r|\n")


def lines_of(text: str) -> list[str]:
    return LINE_BREAK.split(text)


def line_starts(text: str) -> list[int]:
    return [0] + [match.end() for match in LINE_BREAK.finditer(text)]


def units(text: str) -> int:
    return sum(2 if ord(char) > 0xFFFF else 1 for char in text)


def position_of(text: str, offset: int) -> dict:
    starts = line_starts(text)
    line = max(index for index, start in enumerate(starts) if start <= offset)
    return {"line": line, "character": units(text[starts[line]:offset])}


def char_of(line_text: str, character: int) -> int:
    count = 0
    for index, char in enumerate(line_text):
        if count >= character:
            return index
        count += 2 if ord(char) > 0xFFFF else 1
    return len(line_text)


class Document:
    """The client's copy of the fuzzed document and the incremental edits that keep the server's in step."""

    def __init__(self, raw: RawServer, name: str, text: str):
        self.raw = raw
        self.path = raw.root / name
        self.uri = self.path.as_uri()
        self.text = text
        self.version = 1
        raw.notify("textDocument/didOpen", {"textDocument": {"uri": self.uri, "languageId": "python", "version": 1, "text": text}})

    def boundary(self, offset: int) -> int:
        """An offset a position can name: not between the \\r and \\n of one line break."""
        offset = max(0, min(offset, len(self.text)))
        if 0 < offset < len(self.text) and self.text[offset - 1] == "\r" and self.text[offset] == "\n":
            offset -= 1
        return offset

    def replace(self, start: int, end: int, new: str):
        start, end = self.boundary(start), self.boundary(end)
        start, end = min(start, end), max(start, end)
        change = {"range": {"start": position_of(self.text, start), "end": position_of(self.text, end)}, "text": new}
        self.text = self.text[:start] + new + self.text[end:]
        self.version += 1
        self.raw.notify("textDocument/didChange", {"textDocument": {"uri": self.uri, "version": self.version}, "contentChanges": [change]})

    def replace_all(self, new: str):
        self.text = new
        self.version += 1
        self.raw.notify("textDocument/didChange", {"textDocument": {"uri": self.uri, "version": self.version}, "contentChanges": [{"text": new}]})

    def random_position(self, rng: random.Random) -> dict:
        line_count = len(lines_of(self.text))
        line = rng.choice([rng.randrange(line_count), line_count, line_count + rng.randrange(1, 50)])
        character = rng.choice([0, rng.randrange(120), rng.randrange(100_000), 2**31 - 1])
        return {"line": line, "character": character}


# -- the operations ------------------------------------------------------------------------------------------
def insert(rng, doc, requests):
    text = "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 6)))
    offset = rng.randint(0, len(doc.text))
    doc.replace(offset, offset, text)


def delete(rng, doc, requests):
    start = rng.randint(0, len(doc.text))
    doc.replace(start, start + rng.randint(1, 40), "")


def huge_line(rng, doc, requests):
    starts = line_starts(doc.text)
    offset = rng.choice(starts)
    doc.replace(offset, offset, rng.choice(HUGE)(rng))


def shuffle_lines(rng, doc, requests):
    lines = lines_of(doc.text)
    rng.shuffle(lines)
    doc.replace_all("\n".join(lines))


def hover(rng, doc, requests):
    requests.append(doc.raw.request_async("textDocument/hover", {"textDocument": {"uri": doc.uri}, "position": doc.random_position(rng)}))


def code_action(rng, doc, requests):
    start, end = doc.random_position(rng), doc.random_position(rng)
    only = rng.choice([None, ["quickfix"], ["source.fixAll"], ["refactor"]])
    context = {"diagnostics": []} if only is None else {"diagnostics": [], "only": only}
    requests.append(doc.raw.request_async("textDocument/codeAction", {"textDocument": {"uri": doc.uri}, "range": {"start": start, "end": end}, "context": context}))


def not_offered(rng, doc, requests):
    method = rng.choice(["textDocument/completion", "textDocument/definition", "textDocument/signatureHelp", "textDocument/formatting"])
    requests.append(doc.raw.request_async(method, {"textDocument": {"uri": doc.uri}, "position": doc.random_position(rng)}))


def command(rng, doc, requests):
    name, arguments = rng.choice([
        ("autograd-lsp.serverInfo", []), ("autograd-lsp.showRuleDoc", [rng.choice(["AG001", "AG999", 5, None])]),
        ("autograd-lsp.fixAll", [doc.uri]), ("autograd-lsp.fixAll", []), ("autograd-lsp.confirm", [doc.uri]),
        ("autograd-lsp.noSuchCommand", []),
    ])
    requests.append(doc.raw.request_async("workspace/executeCommand", {"command": name, "arguments": arguments}))


def cancel(rng, doc, requests):
    if requests:
        doc.raw.notify("$/cancelRequest", {"id": rng.choice(requests[-5:])})


def save(rng, doc, requests):
    doc.raw.notify("textDocument/didSave", {"textDocument": {"uri": doc.uri}})


def invalid(rng, doc, requests):
    choice = rng.randrange(4)
    if choice == 0:
        doc.raw.send_bytes(rng.choice(BAD_MESSAGES))
    elif choice == 1:  # a request with invalid params: it must be answered
        requests.append(doc.raw.request_async("textDocument/hover", {"textDocument": rng.choice([5, "x", None, {}])}))
    elif choice == 2:
        doc.raw.notify("textDocument/didChange", {"textDocument": {"uri": doc.uri + ".unopened", "version": 1},
                                                  "contentChanges": [{"text": "x"}]})
    else:
        requests.append(doc.raw.request_async("textDocument/hover", {"textDocument": {"uri": doc.uri}, "position": {"line": -1, "character": -5}}))


OPERATIONS_BY_WEIGHT = [(insert, 30), (delete, 15), (huge_line, 2), (shuffle_lines, 2), (hover, 15), (code_action, 12),
                        (not_offered, 4), (command, 5), (cancel, 3), (save, 2), (invalid, 10)]


# -- the end: a text that parses, and the CLI's opinion of it ------------------------------------------------
def make_parseable(doc: Document):
    """Paste the base program at the end (so that there is something to find), remove what UTF-8 cannot hold,
    then each line a syntax error points at: edits like a user's."""
    doc.replace(len(doc.text), len(doc.text), "\n" + BASE)
    for index in reversed([i for i, char in enumerate(doc.text) if 0xD800 <= ord(char) <= 0xDFFF or char == "\x00"]):
        doc.replace(index, index + 1, "")
    for _ in range(2_000):
        try:
            ast.parse(doc.text.replace("\r\n", "\n").replace("\r", "\n"))
            return
        except SyntaxError as error:
            line = max(1, min(error.lineno or 1, len(lines_of(doc.text)))) - 1
            starts = line_starts(doc.text) + [len(doc.text)]
            doc.replace(starts[line], starts[line + 1], "")
    doc.replace_all("")


def server_findings(raw: RawServer, doc: Document) -> set:
    published = raw.wait_for(lambda m: isinstance(m, dict) and m.get("method") == "textDocument/publishDiagnostics"
                             and m["params"]["uri"] == doc.uri and m["params"].get("version") == doc.version, timeout=60)
    lines = lines_of(doc.text)
    found = set()
    for diagnostic in published["params"]["diagnostics"]:
        start, end = diagnostic["range"]["start"], diagnostic["range"]["end"]
        found.add((diagnostic["code"], start["line"], char_of(lines[start["line"]], start["character"]),
                   end["line"], char_of(lines[end["line"]], end["character"])))
    return found


def cli_findings(doc: Document) -> set:
    doc.path.write_text(doc.text, encoding="utf-8", newline="")
    done = subprocess.run([sys.executable, "-m", "autograd_lsp", "check", "--format", "json", str(doc.path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode in (0, 1), done.stderr
    return {(item["code"], item["line"] - 1, item["column"] - 1, item["end_line"] - 1, item["end_column"] - 1)
            for item in json.loads(done.stdout)}


def test_fuzzed_session_is_answered_survives_and_agrees_with_the_cli(tmp_path):
    rng = random.Random(SEED)
    raw = RawServer(tmp_path)
    try:
        assert "result" in raw.initialize()
        doc = Document(raw, "fuzzed.py", BASE)
        operations, weights = zip(*OPERATIONS_BY_WEIGHT)
        requests: list[int] = []
        answered = 0
        for step in range(OPERATIONS):
            rng.choices(operations, weights)[0](rng, doc, requests)
            if (step + 1) % CHECK_EVERY == 0 or step + 1 == OPERATIONS:
                for ident in requests[answered:]:
                    raw.response(ident, timeout=WAIT)  # raises if the request is never answered
                answered = len(requests)
                assert raw.alive(), f"the server died at operation {step}"
        assert answered > 60, "the fuzz sent too few requests to mean anything"
        make_parseable(doc)
        found = server_findings(raw, doc)
        assert found == cli_findings(doc)
        assert len({code for code, *_ in found}) >= 2, f"too little left to compare: {found}"
        assert raw.alive()
        errors = [m for m in raw.popups() if m["params"]["type"] == 1 and "Error in server" in m["params"]["message"]]
        assert errors == [], errors
    finally:
        code = raw.close()
    assert code == 0
