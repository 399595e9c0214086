"""How well a subset separates MT systems (seed 000 App. A, seed 001 Table 4), as a job.

* ``models``: :class:`DiscriminationAnalysis`, the job row (subject, settings, state, result);
* ``inputs``: what a subject is as scores: a frozen version's segments of the difficulty
  dataset they came from, a dataset's hardest-by-estimator order, an MT-breaker comparison's
  texts scored for several translators;
* ``gaps`` (pure): seed 001 Table 4's mean per translator per method and the gaps between them;
* ``services``: start, rounds on the kernel, cancel; ``selectors``: access and page data;
* ``plots``, ``exports``, ``forms``, ``views``, ``urls``, ``api``, ``sections`` (the sections
  drawn on the version, DEC evaluation and comparison pages through ``core.sections``).

The measures themselves are ``ranking.discrimination`` (pure).
"""
