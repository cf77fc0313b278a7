"""autograd-lsp: catch PyTorch autograd mistakes while the code is being written."""

__version__ = "0.1.0"
