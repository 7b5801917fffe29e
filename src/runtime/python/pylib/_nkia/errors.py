"""Errors the NKI core raises into kernel code."""


class NkiError(Exception):
    """A kernel broke one of NKI's rules. ``code`` is the NKI catalogue code (``err_*``) or one of
    nki-agent's own (``nkia_*``); ``hint`` says how to fix it. The runner turns it into a
    Diagnostic at the kernel line that raised it."""

    def __init__(self, code, message, hint=""):
        super().__init__(message)
        self.code = code
        self.hint = hint
