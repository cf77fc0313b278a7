"""The language server (`autograd-lsp serve`), one module per job:

- app: the LanguageServer and its handlers, each a few lines that delegate
- protocol: JSON-RPC beyond pygls (cancelling a command with its request)
- documents: the open documents and notebooks (units), their snapshots and analyses
- scheduling: debouncing and coalescing edits, the analysis thread, making a result current
- jedi_pass: the background cross-module pass and the memo the fast pass reads
- retention: which analysis models stay in memory, and when garbage is collected
- diagnostics: publishing and pulling diagnostics, workspace diagnostics
- actions: fixes, noqa, fix-all; hover: findings and provenance under the cursor
- jobs: long-running jobs with progress and cancellation; confirming: the confirm job
- commands: rule documentation and server info; settings: client options and pyproject.toml
- carry_over: keeping findings while the text does not parse
"""
from .app import serve, server

__all__ = ["serve", "server"]
