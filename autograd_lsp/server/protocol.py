"""The JSON-RPC side of the server: what pygls's LanguageServerProtocol does, plus cancelling a command's
coroutine with its request."""
from __future__ import annotations

from pygls.protocol import LanguageServerProtocol


class AutogradProtocol(LanguageServerProtocol):
    """pygls cancels a `workspace/executeCommand` request's response but not the command's coroutine (it runs
    as an inner task); commands register here to be cancelled with their request."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.cancel_callbacks: dict = {}

    def _handle_cancel_notification(self, msg_id):
        for callback in self.cancel_callbacks.pop(msg_id, []):
            callback()
        super()._handle_cancel_notification(msg_id)
