"""The files of a ranking job's result, served alike by the pages and the API: a ranking's
table (``ranking.tables``) or an analysis's measures (``ranking.subsets.exports``), each module
naming its ``FORMATS`` (format -> content type, extension) and how to ``render`` one."""

from __future__ import annotations

from types import ModuleType

from django.http import HttpResponse

from core.http import download
from ranking import tables
from ranking.models import RankingJob, SystemRanking
from ranking.subsets import exports
from ranking.subsets.models import DiscriminationAnalysis

__all__ = ["formats", "result_file"]


_RENDERERS: dict[type[RankingJob], ModuleType] = {
    SystemRanking: tables,
    DiscriminationAnalysis: exports,
}


def formats(model: type[RankingJob]) -> list[str]:
    """The formats a download offers ("text" is the commands' own)."""
    return [fmt for fmt in _RENDERERS[model].FORMATS if fmt != "text"]


def result_file(job: RankingJob, fmt: str) -> HttpResponse:
    """The done job's result as a file in ``fmt``, named after the job."""
    renderer = _RENDERERS[type(job)]
    content_type, extension = renderer.FORMATS[fmt]
    filename = f"{job.file_prefix}-{job.pk}.{extension}"
    return download(renderer.render(job.result, fmt), filename, content_type)
