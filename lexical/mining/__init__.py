"""Mining concepts with variations from a parallel corpus (seed 004 §2.1, App. B.1).

Pure modules (no Django): ``params`` (thresholds with the paper's defaults), ``text``
(tokenise, lemmatise, stop words), ``alignment`` (eflomal), ``counting`` (the one-to-many map
source (lemma, POS) → target lemma), ``filters`` (count, variations, entropy and the pluggable
polysemy filter), ``examples`` (example sentence pairs per variation), ``pipeline`` (the passes
end to end, in chunks) and ``synthetic`` (a seeded corpus with planted concepts). The job that
runs them in workers lives in ``services``.
"""
