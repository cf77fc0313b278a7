"""The provenance analyzer: one pass over the stdlib ast; never imports torch."""
from .model import ModuleModel, build_model

__all__ = ["ModuleModel", "build_model"]
