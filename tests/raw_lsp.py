"""A raw stdio LSP client for the robustness and fuzz tests: it can send bytes no well-behaved client would
(malformed JSON, non-objects, invalid params) and records every message the server sends, so a test can
assert what came back for each. Written for these tests; no pygls on the client side."""
from __future__ import annotations

import itertools
import json
import subprocess
import sys
import threading
import time
from pathlib import Path

WAIT = 20  # seconds: every wait here is bounded by this


class RawServer:
    def __init__(self, root: Path):
        self.root = root
        self.proc = subprocess.Popen([sys.executable, "-m", "autograd_lsp", "serve"], cwd=root, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0)
        self.messages: list[dict] = []  # everything the server sent, in order
        self.ids = itertools.count(1)
        self._cond = threading.Condition()
        self._closed = False
        self._stderr: list[bytes] = []
        self._write = threading.Lock()  # the reader thread answers server requests while a test sends
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=lambda: self._stderr.extend(iter(self.proc.stderr.readline, b"")), daemon=True).start()

    # -- transport -------------------------------------------------------------------------------------
    def send_bytes(self, body: bytes) -> None:
        with self._write:
            self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            self.proc.stdin.flush()

    def send(self, message) -> None:
        self.send_bytes(json.dumps(message).encode("utf-8"))

    def _read(self):
        stream = self.proc.stdout
        try:
            while True:
                length = None
                while True:
                    line = stream.readline()
                    if not line:
                        return
                    if not line.strip():
                        break
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                body = b""
                while length is not None and len(body) < length:
                    chunk = stream.read(length - len(body))
                    if not chunk:
                        return
                    body += chunk
                message = json.loads(body)
                if isinstance(message, dict) and "method" in message and "id" in message:
                    self._answer(message)
                with self._cond:
                    self.messages.append(message)
                    self._cond.notify_all()
        finally:
            with self._cond:
                self._closed = True
                self._cond.notify_all()

    def _answer(self, request: dict):
        """Requests from the server (configuration, progress, registration) get a plain answer."""
        if request["method"] == "workspace/configuration":
            result = [None for _ in request.get("params", {}).get("items", [])]
        elif request["method"] == "workspace/applyEdit":
            result = {"applied": False}  # the tests keep their own copy of the text
        else:
            result = None
        self.send({"jsonrpc": "2.0", "id": request["id"], "result": result})

    def wait_for(self, predicate, timeout: float = WAIT, start: int = 0) -> dict:
        deadline = time.monotonic() + timeout
        with self._cond:
            index = start
            while True:
                while index < len(self.messages):
                    if predicate(self.messages[index]):
                        return self.messages[index]
                    index += 1
                left = deadline - time.monotonic()
                if self._closed or left <= 0:
                    raise AssertionError(f"no such message within {timeout} s (server {'exited' if self._closed else 'alive'}); "
                                         f"last: {self.messages[-3:]}; stderr: {b''.join(self._stderr)[-2000:]!r}")
                self._cond.wait(left)

    # -- requests --------------------------------------------------------------------------------------
    def request_async(self, method: str, params) -> int:
        ident = next(self.ids)
        self.send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
        return ident

    def response(self, ident, timeout: float = WAIT) -> dict:
        return self.wait_for(lambda m: isinstance(m, dict) and m.get("id") == ident and "method" not in m, timeout)

    def request(self, method: str, params, timeout: float = WAIT) -> dict:
        return self.response(self.request_async(method, params), timeout)

    def notify(self, method: str, params) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def initialize(self, capabilities: dict | None = None) -> dict:
        response = self.request("initialize", {
            "processId": None, "rootUri": self.root.as_uri(),
            "capabilities": capabilities if capabilities is not None else {
                "textDocument": {"hover": {"contentFormat": ["markdown"]}, "publishDiagnostics": {"versionSupport": True}},
                "window": {"workDoneProgress": True}},
        })
        self.notify("initialized", {})
        return response

    # -- what came back --------------------------------------------------------------------------------
    def popups(self) -> list[dict]:
        """window/showMessage errors and warnings: what a user sees as a notification."""
        return [m for m in self.snapshot() if isinstance(m, dict) and m.get("method") == "window/showMessage"]

    def logs(self) -> list[str]:
        return [m["params"]["message"] for m in self.snapshot() if isinstance(m, dict) and m.get("method") == "window/logMessage"]

    def published(self, uri: str) -> list[dict]:
        return [m["params"] for m in self.snapshot()
                if isinstance(m, dict) and m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri]

    def snapshot(self) -> list:
        with self._cond:
            return list(self.messages)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self) -> int | None:
        try:
            if self.alive():
                self.request("shutdown", None, timeout=WAIT)
                self.notify("exit", None)
                return self.proc.wait(WAIT)
        except Exception:
            pass
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait(WAIT)
            for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
                try:
                    stream.close()
                except OSError:
                    pass
        return self.proc.returncode
