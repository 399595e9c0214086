"""Read queries for topic trees, their topics, samples and per-topic pull statistics (seed 000).

Trees can hold 100k+ topics, so nothing here loads a whole tree: pages ask for one level of
children, or for search matches, a page at a time. Statistics use the depth-first ``position``:
the subtree of a topic is exactly the topics with positions in ``[position, subtree_end)``, so
one aggregate query covers every inner node shown on a page.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

from django.db.models import (
    Aggregate,
    Avg,
    Case,
    Count,
    IntegerField,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Value,
    When,
)
from django.db.models.functions import Coalesce
from django.http import Http404

from core.access import visible_or_404
from search.access import may_use_search
from search.models import Pull, SearchRun, TextSample, Topic, TopicTree

__all__ = [
    "NodeStats",
    "ancestors_of",
    "child_nodes",
    "hardest_leaves",
    "leaf_stats_by_run",
    "node_stats",
    "run_of_tree",
    "runs_of_tree",
    "search_topics",
    "topic_for_user",
    "topic_pulls",
    "topic_samples",
    "tree_for_user",
    "tree_rows",
    "tree_topics",
    "tree_totals",
    "trees_for_user",
]


def trees_for_user(user) -> QuerySet[TopicTree]:
    if not may_use_search(user):
        return TopicTree.objects.none()
    return TopicTree.objects.all()


def tree_for_user(user, pk: int) -> TopicTree:
    """The one permission-checked accessor for topic trees (views and API)."""
    return visible_or_404(trees_for_user(user), pk, "No such topic tree.")


def topic_for_user(user, pk: int) -> Topic:
    if not may_use_search(user):
        raise Http404("No such topic.")
    rows = _with_node_facts(Topic.objects.select_related("tree"))
    return visible_or_404(rows, pk, "No such topic.")


def tree_rows(user) -> QuerySet[TopicTree]:
    """Trees with their sample counts (one correlated count, not a join over every topic)."""
    return (
        trees_for_user(user)
        .select_related("created_by")
        .annotate(n_samples=_count_of(TextSample.objects.all(), "topic__tree"))
    )


def _count_of(rows: QuerySet, key: str) -> Coalesce:
    """How many ``rows`` have ``key`` equal to the outer row's pk, 0 where none: a correlated
    count subquery, so the outer query needs no GROUP BY."""
    counts = rows.filter(**{key: OuterRef("pk")}).order_by().values(key)
    return Coalesce(
        Subquery(counts.annotate(n=Count("id")).values("n"), output_field=IntegerField()), 0
    )


def _with_node_facts(topics: QuerySet[Topic]) -> QuerySet[Topic]:
    """Annotate ``n_children`` and ``subtree_end``, the next position outside the topic's
    subtree (None: the end of the tree); correlated subqueries, so no GROUP BY over topics."""
    following = Topic.objects.filter(
        tree=OuterRef("tree"), position__gt=OuterRef("position"), depth__lte=OuterRef("depth")
    ).order_by("position")
    return topics.annotate(
        n_children=_count_of(Topic.objects.all(), "parent"),
        subtree_end=Subquery(following.values("position")[:1]),
    )


def child_nodes(tree: TopicTree, parent: Topic | None) -> QuerySet[Topic]:
    """One level of the tree (the roots when ``parent`` is None), in depth-first order."""
    return _with_node_facts(Topic.objects.filter(tree=tree, parent=parent)).order_by("position")


def tree_topics(tree: TopicTree) -> QuerySet[Topic]:
    """Every topic in depth-first order (callers paginate)."""
    return _with_node_facts(Topic.objects.filter(tree=tree)).order_by("position")


def search_topics(tree: TopicTree, query: str) -> QuerySet[Topic]:
    """Topics whose path contains every word of ``query`` (any case), in tree order."""
    topics = Topic.objects.filter(tree=tree)
    for word in query.split()[:8]:
        topics = topics.filter(path__icontains=word)
    return _with_node_facts(topics).order_by("position")


def ancestors_of(topic: Topic) -> list[Topic]:
    """Root first; one query per level (trees are shallow, a dozen levels at most)."""
    chain: list[Topic] = []
    parent_id = topic.parent_id
    while parent_id is not None:
        parent = Topic.objects.only("id", "name", "parent_id").get(pk=parent_id)
        chain.append(parent)
        parent_id = parent.parent_id
    return chain[::-1]


def runs_of_tree(tree: TopicTree) -> QuerySet[SearchRun]:
    return SearchRun.objects.filter(tree=tree).only("id", "name", "status").order_by("-id")


def run_of_tree(tree: TopicTree, value: str | None) -> SearchRun | None:
    """The run named by a ``?run=`` parameter, if it is a run of this tree (else all runs)."""
    if not value or not value.isdigit():
        return None
    return runs_of_tree(tree).filter(pk=int(value)).first()


def _pulls(tree: TopicTree, run: SearchRun | None) -> QuerySet[Pull]:
    pulls = Pull.objects.filter(topic__tree=tree)
    return pulls.filter(run=run) if run is not None else pulls


@dataclass(frozen=True)
class NodeStats:
    pulls: int
    mean_difficulty: float | None
    pulled_leaves: int | None = None  # inner nodes: distinct leaves below with a pull


def node_stats(
    tree: TopicTree, topics: Sequence[Topic], run: SearchRun | None
) -> dict[int, NodeStats]:
    """Pull counts and mean difficulty per shown topic; two queries whatever the page size.

    Leaves group their own pulls; inner nodes aggregate the pulls of their subtree's leaves
    (``topics`` must carry ``subtree_end``, as :func:`child_nodes` and :func:`search_topics`
    annotate it).
    """
    pulls = _pulls(tree, run)
    stats: dict[int, NodeStats] = {}
    leaves = [topic.pk for topic in topics if topic.arm is not None]
    if leaves:
        rows = (
            pulls.filter(topic_id__in=leaves)
            .values("topic_id")
            .annotate(n=Count("id"), mean=Avg("difficulty"))
        )
        for row in rows:
            stats[row["topic_id"]] = NodeStats(row["n"], row["mean"])
    inner = [topic for topic in topics if topic.arm is None]
    if inner and pulls.exists():
        stats.update(_subtree_stats(pulls, inner))
    return stats


def _subtree_end(topic: Topic) -> int | None:
    """The ``subtree_end`` that :func:`_with_node_facts` annotates on each topic."""
    # An annotation, not a model field: the stubs only know it on WithAnnotations querysets.
    end: int | None = topic.subtree_end  # type: ignore[attr-defined]
    return end


def _subtree_stats(pulls: QuerySet[Pull], inner: Sequence[Topic]) -> dict[int, NodeStats]:
    # Only pulls inside the shown subtrees are read: siblings' subtrees are one contiguous
    # position range, so expanding a small branch of a big tree stays cheap.
    pulls = pulls.filter(topic__position__gt=min(topic.position for topic in inner))
    ends = [_subtree_end(topic) for topic in inner]
    known_ends = [end for end in ends if end is not None]
    if len(known_ends) == len(ends):
        pulls = pulls.filter(topic__position__lt=max(known_ends))
    if _disjoint(inner):
        return _bucketed_stats(pulls, inner)
    return _filtered_stats(pulls, inner)


def _disjoint(inner: Sequence[Topic]) -> bool:
    """Siblings' subtrees never overlap; search matches may (a topic and its descendant)."""
    ordered = sorted(inner, key=lambda topic: topic.position)
    return all(
        (end := _subtree_end(a)) is not None and end <= b.position for a, b in pairwise(ordered)
    )


def _bucketed_stats(pulls: QuerySet[Pull], inner: Sequence[Topic]) -> dict[int, NodeStats]:
    """One GROUP BY pass: each pull goes to the one shown subtree that holds its topic.

    A CASE stops at its first matching branch, far cheaper per row than one filtered aggregate
    per topic (which made a 100k-pull tree page take a second).
    """
    branches = []
    for topic in inner:
        below = Q(topic__position__gt=topic.position)
        if _subtree_end(topic) is not None:
            below &= Q(topic__position__lt=_subtree_end(topic))
        branches.append(When(below, then=Value(topic.pk)))
    bucket = Case(*branches, default=None, output_field=IntegerField())
    rows = (
        pulls.annotate(bucket=bucket)
        .values("bucket")
        .annotate(n=Count("id"), mean=Avg("difficulty"), leaves=Count("topic_id", distinct=True))
    )
    # Pulls of leaves shown beside the inner topics fall in no branch and are left out.
    return {
        row["bucket"]: NodeStats(row["n"], row["mean"], row["leaves"])
        for row in rows
        if row["bucket"] is not None
    }


def _filtered_stats(pulls: QuerySet[Pull], inner: Sequence[Topic]) -> dict[int, NodeStats]:
    """One filtered aggregate per topic, for subtrees that may nest (a page of search matches)."""
    aggregates: dict[str, Aggregate] = {}
    for topic in inner:
        below = Q(topic__position__gt=topic.position)
        if _subtree_end(topic) is not None:
            below &= Q(topic__position__lt=_subtree_end(topic))
        aggregates[f"n_{topic.pk}"] = Count("id", filter=below)
        aggregates[f"mean_{topic.pk}"] = Avg("difficulty", filter=below)
        aggregates[f"leaves_{topic.pk}"] = Count("topic_id", filter=below, distinct=True)
    row = pulls.aggregate(**aggregates)
    return {
        topic.pk: NodeStats(
            row[f"n_{topic.pk}"], row[f"mean_{topic.pk}"], row[f"leaves_{topic.pk}"]
        )
        for topic in inner
        if row[f"n_{topic.pk}"]
    }


def tree_totals(tree: TopicTree, run: SearchRun | None) -> dict:
    """Pulls, distinct leaves pulled and mean difficulty over the tree (or one of its runs)."""
    return _pulls(tree, run).aggregate(
        pulls=Count("id"), leaves=Count("topic_id", distinct=True), mean=Avg("difficulty")
    )


def hardest_leaves(tree: TopicTree, run: SearchRun | None, limit: int = 10) -> list[dict]:
    """The leaves with the highest mean difficulty so far, with their pull counts.

    Grouped by topic id alone (grouping by the path text too was the slow part), then the few
    winners' names are read in a second query.
    """
    rows = list(
        _pulls(tree, run)
        .values("topic_id")
        .annotate(n=Count("id"), mean=Avg("difficulty"))
        .order_by("-mean", "topic_id")[:limit]
    )
    topics = Topic.objects.filter(pk__in=[r["topic_id"] for r in rows]).only("name", "path")
    by_id = {topic.pk: topic for topic in topics}
    result = []
    for row in rows:
        topic = by_id[row["topic_id"]]
        result.append(
            {
                "topic_id": topic.pk,
                "name": topic.name,
                "path": topic.path,
                "parent_path": topic.path.removesuffix(topic.name).removesuffix(" > "),
                "pulls": row["n"],
                "mean": row["mean"],
            }
        )
    return result


def leaf_stats_by_run(topic: Topic) -> list[dict]:
    """A leaf's pulls and mean difficulty per run, newest run first."""
    return list(
        Pull.objects.filter(topic=topic)
        .values("run_id", "run__name")
        .annotate(pulls=Count("id"), mean=Avg("difficulty"), human=Count("human_difficulty"))
        .order_by("-run_id")
    )


def topic_samples(topic: Topic) -> QuerySet[TextSample]:
    return TextSample.objects.filter(topic=topic).order_by("id")


def topic_pulls(topic: Topic) -> QuerySet[Pull]:
    return (
        Pull.objects.filter(topic=topic)
        .select_related("run")
        .only(
            "id",
            "text",
            "difficulty",
            "automatic_difficulty",
            "human_difficulty",
            "created_at",
            "round_index",
            "run__id",
            "run__name",
        )
        .order_by("-run_id", "round_index", "slot")
    )
