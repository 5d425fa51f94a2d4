"""The package's version (``agui_chat.__version__``; also the instrumentation scope's)."""

__version__ = "0.1.0"
