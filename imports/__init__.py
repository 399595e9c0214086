"""Background imports (ADR 0022): a big upload becomes an :class:`~imports.models.ImportJob`
that a worker parses and writes in one transaction.

Apps register an :class:`ImportKind` (how to import their files) in ``AppConfig.ready``; this app
imports no other app of the platform, only the round kernel, so every importing app may use it.
"""

from imports.kinds import ImportKind, ImportRefused, register

__all__ = ["ImportKind", "ImportRefused", "register"]
