"""Pages of the annotation app, one module per audience: ``staff`` (organisers' campaign and
annotator pages), ``signup`` (public sign-up, joining, Prolific), ``annotate`` (annotators' work)
and ``dashboard`` (live progress, charts, export downloads). Thin adapters over services,
selectors and access checks."""
