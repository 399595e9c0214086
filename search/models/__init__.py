"""Models of the search app, one module per job: topic trees (``topics``), bandit search runs
(``runs``), MT-breaker runs (``breaker``) and their transfers (``transfer``). Everything is
re-exported here, so ``from search.models import X`` keeps working wherever X lives."""

from search.models.breaker import (
    BreakerCampaign,
    BreakerChain,
    BreakerRun,
    BreakerStatistics,
    BreakerStep,
)
from search.models.runs import PolicyChanges, Pull, SearchRun
from search.models.topics import (
    TextSample,
    Topic,
    TopicTree,
    _validate_json_object,
    _validate_string_list,
)
from search.models.transfer import BreakerTransfer, TransferResult

__all__ = [
    "BreakerCampaign",
    "BreakerChain",
    "BreakerRun",
    "BreakerStatistics",
    "BreakerStep",
    "BreakerTransfer",
    "PolicyChanges",
    "Pull",
    "SearchRun",
    "TextSample",
    "Topic",
    "TopicTree",
    "TransferResult",
    "_validate_json_object",
    "_validate_string_list",
]
