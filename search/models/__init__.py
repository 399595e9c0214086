"""Models of the search app, one module per job: topic trees (``topics``), bandit search runs
(``runs``) and MT-breaker runs (``breaker``). Everything is re-exported here, so
``from search.models import X`` keeps working wherever X lives."""

from search.models.breaker import BreakerCampaign, BreakerChain, BreakerRun, BreakerStep
from search.models.runs import Pull, SearchRun
from search.models.topics import (
    TextSample,
    Topic,
    TopicTree,
    _validate_json_object,
    _validate_string_list,
)

__all__ = [
    "BreakerCampaign",
    "BreakerChain",
    "BreakerRun",
    "BreakerStep",
    "Pull",
    "SearchRun",
    "TextSample",
    "Topic",
    "TopicTree",
    "_validate_json_object",
    "_validate_string_list",
]
