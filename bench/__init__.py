"""Benchmark harness for autograd-lsp (run it with ``python -m bench [--quick]``; see bench/README.md)."""
