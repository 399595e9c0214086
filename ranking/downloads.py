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

__all__ = ["formats", "render", "result_file"]


_RENDERERS: dict[type[RankingJob], ModuleType] = {
    SystemRanking: tables,
    DiscriminationAnalysis: exports,
}


def formats(model: type[RankingJob], *, text: bool = False) -> list[str]:
    """The formats a download offers; with ``text``, a command's too (its plain table)."""
    return [fmt for fmt in _RENDERERS[model].FORMATS if text or fmt != "text"]


def render(job: RankingJob, fmt: str) -> str:
    """The done job's result in ``fmt``."""
    return _RENDERERS[type(job)].render(job.result, fmt)


def result_file(job: RankingJob, fmt: str) -> HttpResponse:
    """The done job's result as a file in ``fmt``, named after the job."""
    renderer = _RENDERERS[type(job)]
    content_type, extension = renderer.FORMATS[fmt]
    filename = f"{job.file_prefix}-{job.pk}.{extension}"
    return download(render(job, fmt), filename, content_type)
