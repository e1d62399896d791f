"""export-bot: the conformance gatekeeper for model export in Transformers."""

__version__ = "0.1.0"
