"""Replay runs (issue 42): allocation policies replayed on a fully crossed difficulty dataset as a
background job, with a page under ``/ranking/replays/`` and the API ``/api/replays/``.

The simulator is ``ranking.replay`` (pure numpy); this package keeps a run on the round kernel
(``models``, ``services``), draws its curves (``charts``) and serves them (``views``, ``api``).
"""
