"""Generating a topic tree with a chat engine, as a background job (seed 000 §2, App. D).

* :func:`start_tree_generation`: check the request, create a ``generating`` tree, queue the job.
* :func:`advance_generation`: the job's one round on the round kernel (``TREE_GENERATIONS``):
  claim the tree with a lease, one prompt per root domain (sent concurrently), each answer
  parsed as untrusted input, the subtrees joined under their roots and saved at once;
  :func:`generate_topic_tree` runs it in the foreground.
* :func:`retry_tree_generation`: run a failed generation again (answers that did arrive come
  from the engine cache, so they are not paid twice).

The tree row is the truth: a redelivered job finds a ready or failed tree and leaves it alone,
and a generation whose database went away waits for it like every round.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.conf import settings as django_settings
from django.db import IntegrityError, transaction
from django.utils import timezone

import rounds
from engines.interfaces import EngineError
from engines.models import Engine
from engines.registry import get_engine, resolve
from search.models import TopicTree
from search.topics.prompts import TOPIC_TREE_PROMPT_VERSION, topic_tree_messages
from search.topics.services import save_generated_tree
from search.topics.trees import (
    MAX_NAME_LENGTH,
    TopicSpec,
    TopicTreeError,
    keywords_of,
    parse_generated_tree,
)

__all__ = [
    "BRANCHING_RANGE",
    "DEPTH_RANGE",
    "MAX_ROOTS",
    "TREE_GENERATIONS",
    "advance_generation",
    "enqueue_tree_generation",
    "generate_topic_tree",
    "retry_tree_generation",
    "start_tree_generation",
]

DEPTH_RANGE = (1, 5)
BRANCHING_RANGE = (2, 20)
# Each root is one engine call; more than this is a batch job, not a form.
MAX_ROOTS = 50
MAX_TREE_NAME_LENGTH: int = TopicTree._meta.get_field("name").max_length or 0


def start_tree_generation(
    name: str,
    engine: Engine | str,
    roots: Sequence[str],
    depth: int,
    branching: int,
    language: str = "en",
    created_by=None,
    *,
    enqueue: bool = True,
) -> TopicTree:
    """Create a ``generating`` tree and (by default) queue its job once the transaction commits.

    Raises :class:`TopicTreeError` with the reason when the request is not usable; nothing is
    written then.
    """
    name = " ".join(name.split())
    record = _chat_engine(engine)
    clean_roots = _clean_roots(roots)
    _check_range("depth", depth, DEPTH_RANGE)
    _check_range("branching factor", branching, BRANCHING_RANGE)
    language = language.strip() or "en"
    if not name:
        raise TopicTreeError("the tree needs a name")
    if len(name) > MAX_TREE_NAME_LENGTH:
        raise TopicTreeError(f"the tree name is longer than {MAX_TREE_NAME_LENGTH} characters")
    generation = {
        "engine": record.name,
        "roots": clean_roots,
        "depth": depth,
        "branching": branching,
        "prompt_version": TOPIC_TREE_PROMPT_VERSION,
    }
    with transaction.atomic():
        try:
            with transaction.atomic():  # a savepoint, so a taken name leaves the caller usable
                tree = TopicTree.objects.create(
                    name=name,
                    language=language,
                    origin=TopicTree.Origin.GENERATED,
                    status=TopicTree.Status.GENERATING,
                    generation=generation,
                    created_by=created_by,
                )
        except IntegrityError:
            raise TopicTreeError(f"a topic tree named {name!r} already exists") from None
        if enqueue:
            enqueue_tree_generation(tree.pk)
    return tree


def retry_tree_generation(tree: TopicTree, *, enqueue: bool = True) -> bool:
    """Queue a failed generated tree again; False when it is not a failed generated tree."""
    with transaction.atomic():
        changed = TopicTree.objects.filter(
            pk=tree.pk, origin=TopicTree.Origin.GENERATED, status=TopicTree.Status.FAILED
        ).update(status=TopicTree.Status.GENERATING, error="")
        if changed and enqueue:
            enqueue_tree_generation(tree.pk)
    return bool(changed)


GENERATE_TASK = "search.generate_topic_tree"


def enqueue_tree_generation(tree_id: int, *, countdown: float | None = None) -> None:
    """Queue the generation job once the current transaction commits."""
    rounds.enqueue(
        GENERATE_TASK, (tree_id,), queue=django_settings.CELERY_SLOW_QUEUE, countdown=countdown
    )


def _generate(tree_id: int, worker: str) -> list[TopicSpec]:
    return _generate_specs(TopicTree.objects.get(pk=tree_id))


def _save(tree: TopicTree, specs: list[TopicSpec]) -> rounds.Status:
    """The whole tree at once, in the round's transaction (the tree locked)."""
    save_generated_tree(tree, specs)
    tree.finished_at = timezone.now()
    return rounds.Status.DONE


def generate_topic_tree(tree_id: int, *, worker: str | None = None) -> TopicTree:
    """The job in this process (the command's foreground run); a tree that is ready or failed
    already is left alone."""
    return TREE_GENERATIONS.run_in_foreground(tree_id, worker=worker)


def _generate_specs(tree: TopicTree) -> list[TopicSpec]:
    """Engine calls happen here, outside any transaction (they may take minutes)."""
    settings = tree.generation
    roots: list[str] = settings["roots"]
    model = resolve(settings["engine"], "chat", scope=f"topic_tree:{tree.pk}")
    conversations = [
        topic_tree_messages(root, settings["depth"], settings["branching"], tree.language)
        for root in roots
    ]
    answers = model.complete_many(conversations)
    specs: list[TopicSpec] = []
    for root, answer in zip(roots, answers, strict=True):
        try:
            subtree = parse_generated_tree(answer.text, tree.language)
        except TopicTreeError as exc:
            raise TopicTreeError(f"the answer for {root!r} is unusable: {exc}") from None
        _append_under_root(specs, root, subtree, tree.language)
    return specs


def _append_under_root(
    specs: list[TopicSpec], root: str, subtree: list[TopicSpec], language: str
) -> None:
    """Add ``root`` as a top-level topic with the model's subtopics below it.

    The prompt asks for the root as the only top-level key. When the model obeys, its children
    are the subtopics; when it leaves the root out (or adds siblings), every top-level topic of
    the answer goes below the root, so each root still heads exactly its own subtree.
    """
    offset = len(specs)
    specs.append(TopicSpec(name=root, parent=None, depth=0, keywords=keywords_of(root, language)))
    top_level = [spec for spec in subtree if spec.parent is None]
    obeyed = len(top_level) == 1 and top_level[0].name.casefold() == root.casefold()
    body = subtree[1:] if obeyed else subtree
    if not body:
        raise TopicTreeError(f"the answer for {root!r} has no subtopics")
    shift = 1 if obeyed else 0  # index of a spec of ``subtree`` within ``body``
    for spec in body:
        if spec.parent is None or (obeyed and spec.parent == 0):
            parent = offset
        else:
            parent = offset + 1 + spec.parent - shift
        specs.append(
            TopicSpec(
                name=spec.name,
                parent=parent,
                depth=spec.depth + (0 if obeyed else 1),
                keywords=spec.keywords,
            )
        )


# The lifecycle every round-based job shares (rounds.jobs), for generated topic trees: one
# round per tree; every engine error fails it (retry_tree_generation runs it again, from the
# cache), and so does a round cut short by the time limit.
TREE_GENERATIONS = rounds.LeasedJobKind(
    label="topic tree generation",
    sweep_name="topic tree generation",
    model=TopicTree,
    work=_generate,
    commit=_save,
    enqueue_round=enqueue_tree_generation,
    state_error=TopicTreeError,
    numbered=False,
    running=TopicTree.Status.GENERATING,
    permanent=(EngineError, TopicTreeError),
    interrupted="the engine took longer than the task time limit; try again",
    internal_reason=lambda exc: f"unexpected error: {exc}",
)
# The job: ask the engine for each root's subtree, then save the whole tree or fail it.
advance_generation = TREE_GENERATIONS.advance
recover_tree_generations = TREE_GENERATIONS.recover


def _chat_engine(engine: Engine | str) -> Engine:
    try:
        record = get_engine(engine)
        resolve(record, "chat")  # the registry's checks: enabled, configured for chat
    except EngineError as exc:
        raise TopicTreeError(str(exc)) from None
    return record


def _clean_roots(roots: Sequence[str]) -> list[str]:
    clean = [" ".join(str(root).split()) for root in roots]
    clean = [root for root in clean if root]
    if not clean:
        raise TopicTreeError("give at least one root domain")
    if len(clean) > MAX_ROOTS:
        raise TopicTreeError(f"at most {MAX_ROOTS} root domains per tree")
    seen: set[str] = set()
    for root in clean:
        if len(root) > MAX_NAME_LENGTH:
            raise TopicTreeError(f"root {root[:40]!r}… is longer than {MAX_NAME_LENGTH} characters")
        if root.casefold() in seen:
            raise TopicTreeError(f"root {root!r} is listed twice")
        seen.add(root.casefold())
    return clean


def _check_range(label: str, value: int, bounds: tuple[int, int]) -> None:
    low, high = bounds
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise TopicTreeError(f"the {label} must be a whole number from {low} to {high}")
