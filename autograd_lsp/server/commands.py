"""The small commands: a rule's documentation, and what the server process has loaded (tests, bug reports)."""
from __future__ import annotations

import os
import sys

from lsprotocol import types

from .. import __version__
from ..rules import find_rule

CMD_RULE_DOC = "autograd-lsp.showRuleDoc"
CMD_SERVER_INFO = "autograd-lsp.serverInfo"


def rule_doc(ls, args) -> str | None:
    code = str(args[0]) if args else ""
    rule = find_rule(code)
    if rule is None:
        ls.show_message(f"autograd-lsp: unknown rule {code!r}", types.MessageType.Warning)
        return None
    return f"# {rule.code} {rule.name} ({rule.severity.value})\n\n{rule.doc}"


def server_info(ls) -> dict:
    return {
        "version": __version__,
        "pid": os.getpid(),
        "torch_imported": any(name == "torch" or name.startswith("torch.") for name in sys.modules),
        "jedi_imported": "jedi" in sys.modules,
        "open_units": sorted(ls.units),
        "units_with_model": list(ls.with_model),
        "pull_mode": ls.pull_mode,
        "encoding": str(getattr(ls.encoding, "value", ls.encoding)),
        "timings": ls.timings,
        "options": {"confirm_enabled": ls.options.confirm_enabled, "confirm_device": ls.options.confirm_device,
                    "confirm_timeout": ls.options.confirm_timeout, "python": ls.options.python,
                    "debounce_ms": ls.options.debounce_ms, "select": ls.options.select, "ignore": ls.options.ignore},
    }
