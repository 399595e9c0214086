"""Offline engines: simulations and deterministic stand-ins that need no network and no model.

Pure worlds (no Django, numpy at most): ``synthetic_world`` (seed 000 §3.3), ``breaker_world``
(a rule-based MT-breaker editor, a fragile translator and a QE that sees its failures),
``lexical_world`` (a rule-based lexical-selection "LLM") and ``hashed_embeddings`` (hashed
character n-grams). Their adapters (``*_adapters``) are the engine kinds the registry builds,
answered in-process through the call path's ``local`` ledger rows (no cache, no cost).

Pages and exports label every answer of these kinds as simulated; nothing here reaches a model.
This package imports no Django, so importing a pure world costs nothing.
"""
