"""jupyter-lsp's spec finder (entry point `jupyter_lsp_spec_v1`): installing autograd-lsp into the environment
that runs JupyterLab is all it takes for jupyterlab-lsp to start `autograd-lsp serve` for Python notebooks and
files. jupyter-lsp calls `spec(manager)` when the server starts; it is not imported here (not a dependency)."""
from __future__ import annotations

import sys

from .. import __version__

KEY = "autograd-lsp"
SPEC_VERSION = 2  # the version of jupyter-lsp's spec schema this dict follows


def spec(manager=None) -> dict:
    """The one language server this package contributes, keyed by its name."""
    return {
        KEY: {
            "version": SPEC_VERSION,
            "display_name": f"autograd-lsp {__version__}",
            "languages": ["python"],
            "mime_types": ["text/python", "text/x-ipython"],
            # The interpreter running Jupyter found this entry point, so it has the package: no PATH lookup.
            "argv": [sys.executable, "-m", "autograd_lsp", "serve"],
            # The server analyses the text it is sent; no shadow copy in .virtual_documents is needed.
            "requires_documents_on_disk": False,
            "env": {"PYTHONUNBUFFERED": "1"},
            "urls": {"home": "https://github.com/autograd-lsp/autograd-lsp",
                     "issues": "https://github.com/autograd-lsp/autograd-lsp/issues"},
            "install": {"pip": "pip install autograd-lsp"},
        }
    }
