"""Hooks into other tools: a flake8 plugin and a jupyter-lsp spec finder (each registered by an entry point)."""
