"""A tiny raw JSON-RPC/LSP stdio client for timing servers (no asyncio, no pygls on the client side, so the
client adds as little as possible to what is measured). A reader thread timestamps every message the
moment it is decoded."""
from __future__ import annotations

import itertools
import json
import os
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Published:
    at: float  # perf_counter when the notification was decoded
    uri: str
    version: int | None
    count: int  # number of diagnostics
    codes: tuple


class LspError(RuntimeError):
    pass


class LspClient:
    def __init__(self, cmd: list[str], cwd: str | Path | None = None, env: dict | None = None, stderr_path: Path | None = None,
                 configuration: object = None):
        self.cmd = cmd
        self.configuration = configuration  # answer to every workspace/configuration item
        self._ids = itertools.count(1)
        self._pending: dict[int, dict] = {}
        self._cond = threading.Condition()
        self.published: list[Published] = []
        self.server_requests: list[str] = []
        self.log_messages: list[str] = []
        self.closed = False
        self._stderr = open(stderr_path, "wb") if stderr_path else subprocess.DEVNULL
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr, bufsize=0)
        self._write_lock = threading.Lock()
        self._reader = threading.Thread(target=self._read_loop, daemon=True)
        self._reader.start()

    # ---------------------------------------------------------------- transport

    def _send(self, message: dict) -> None:
        body = json.dumps(message, separators=(",", ":")).encode("utf-8")
        data = b"Content-Length: %d\r\n\r\n" % len(body) + body
        with self._write_lock:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()

    def _read_loop(self) -> None:
        stream = self.proc.stdout
        try:
            while True:
                length = None
                while True:
                    line = stream.readline()
                    if not line:
                        raise EOFError
                    line = line.strip()
                    if not line:
                        break
                    name, _, value = line.partition(b":")
                    if name.lower() == b"content-length":
                        length = int(value)
                if length is None:
                    continue
                body = b""
                while len(body) < length:
                    chunk = stream.read(length - len(body))
                    if not chunk:
                        raise EOFError
                    body += chunk
                now = time.perf_counter()
                self._dispatch(json.loads(body), now)
        except (EOFError, ValueError, OSError):
            pass
        finally:
            with self._cond:
                self.closed = True
                self._cond.notify_all()

    def _dispatch(self, message: dict, now: float) -> None:
        method = message.get("method")
        if method is None:  # a response
            with self._cond:
                message["_at"] = now
                self._pending[message.get("id")] = message
                self._cond.notify_all()
            return
        if "id" in message:  # a request from the server: answer at once
            self.server_requests.append(method)
            if method == "workspace/configuration":
                result = [self.configuration for _ in message.get("params", {}).get("items", [])]
            else:
                result = None
            try:
                self._send({"jsonrpc": "2.0", "id": message["id"], "result": result})
            except OSError:
                pass
            return
        if method == "textDocument/publishDiagnostics":
            params = message.get("params", {})
            diagnostics = params.get("diagnostics", [])
            record = Published(now, params.get("uri"), params.get("version"), len(diagnostics),
                               tuple(sorted({str(d.get("code")) for d in diagnostics})))
            with self._cond:
                self.published.append(record)
                self._cond.notify_all()
        elif method in ("window/logMessage", "window/showMessage"):
            self.log_messages.append(message.get("params", {}).get("message", ""))

    # ---------------------------------------------------------------- API

    def request(self, method: str, params, timeout: float = 60.0) -> tuple[object, float]:
        """Send a request; return (result, perf_counter at which the response arrived)."""
        ident = next(self._ids)
        self._send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
        deadline = time.perf_counter() + timeout
        with self._cond:
            while ident not in self._pending:
                if self.closed:
                    raise LspError(f"server exited while waiting for {method}")
                left = deadline - time.perf_counter()
                if left <= 0:
                    raise LspError(f"timeout waiting for {method}")
                self._cond.wait(left)
            response = self._pending.pop(ident)
        if "error" in response:
            raise LspError(f"{method}: {response['error']}")
        return response.get("result"), response["_at"]

    def notify(self, method: str, params) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def wait_published(self, predicate, start_index: int = 0, timeout: float = 30.0) -> tuple[Published, int]:
        """Wait for the first publishDiagnostics at index >= start_index matching predicate; (record, index)."""
        deadline = time.perf_counter() + timeout
        with self._cond:
            index = start_index
            while True:
                while index < len(self.published):
                    if predicate(self.published[index]):
                        return self.published[index], index
                    index += 1
                if self.closed:
                    raise LspError("server exited while waiting for diagnostics")
                left = deadline - time.perf_counter()
                if left <= 0:
                    raise LspError("timeout waiting for diagnostics")
                self._cond.wait(left)

    def initialize(self, root: Path, timeout: float = 60.0, initialization_options=None) -> tuple[dict, float]:
        """initialize + initialized; return (server capabilities, seconds from process start to the result)."""
        params = {
            "processId": os.getpid(),
            "clientInfo": {"name": "autograd-lsp-bench", "version": "0"},
            "rootUri": root.as_uri(),
            "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
            "capabilities": {
                "workspace": {"configuration": True, "workspaceFolders": True, "didChangeConfiguration": {"dynamicRegistration": True}},
                "textDocument": {
                    "synchronization": {"dynamicRegistration": False, "didSave": True},
                    "publishDiagnostics": {"versionSupport": True, "relatedInformation": True, "codeDescriptionSupport": True},
                    "codeAction": {"codeActionLiteralSupport": {"codeActionKind": {"valueSet": ["quickfix", "source.fixAll"]}}},
                    "hover": {"contentFormat": ["markdown", "plaintext"]},
                },
                "window": {"workDoneProgress": True},
                "general": {"positionEncodings": ["utf-16"]},
            },
        }
        if initialization_options is not None:
            params["initializationOptions"] = initialization_options
        result, at = self.request("initialize", params, timeout)
        self.notify("initialized", {})
        return (result or {}).get("capabilities", {}), at - self.started

    def shutdown(self, timeout: float = 10.0) -> None:
        try:
            if not self.closed:
                self.request("shutdown", None, timeout)
                self.notify("exit", None)
            self.proc.wait(timeout)
        except (LspError, OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()
        finally:
            if self._stderr is not subprocess.DEVNULL:
                self._stderr.close()


def sync_kind(capabilities: dict) -> int:
    """1 = full, 2 = incremental (0 = none)."""
    sync = capabilities.get("textDocumentSync", 0)
    if isinstance(sync, dict):
        return int(sync.get("change", 0) or 0)
    return int(sync or 0)
