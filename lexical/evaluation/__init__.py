"""Model evaluation on lexical selection (seed 004 §4, App. B.2–B.4).

Pure modules (no Django): :mod:`.entries` (what is evaluated), :mod:`.prompts` (Fig. 7/8),
:mod:`.matching` (answer parsing and matching to a variation), :mod:`.options` (shuffled option
order), :mod:`.metrics` (accuracies, baseline, position bias) and :mod:`.charts` (Fig. 2).
Django side: :mod:`.services` (create, rounds, cancel, recovery), :mod:`.selectors`,
:mod:`.rule_source`, views, forms and the demo.
"""
