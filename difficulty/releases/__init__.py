"""Readers of the field's multi-system human-evaluation releases, as they ship (no Django).

* :mod:`.mtme`: Google's mt-metrics-eval layout (a folder or its archive);
* :mod:`.wmt_da`: a WMT crowd-DA release (individual judgments and per-segment means);
* :mod:`.judgments`: the individual judgments a language pair keeps beside its score matrix.

Each reader turns a :class:`formats.archives.ReleaseFiles` into
:class:`difficulty.dataset_format.ParsedSegment` rows, the judgments, and an import report
counting what it let through (``None`` cells, checks, repeats, duplicates); anything it cannot
read faithfully is refused with a :class:`difficulty.dataset_format.DatasetFormatError` naming
the file and the line. Google's MQM TSVs are read by ``annotation.formats.google_mqm``.
"""
