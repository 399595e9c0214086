from django.core.management.base import BaseCommand, CommandError

from search.models import TopicTree
from search.topics.generation import generate_topic_tree, start_tree_generation
from search.topics.services import TopicTreeError


class Command(BaseCommand):
    help = (
        "Generate a topic tree with a chat engine, one engine call per root domain. Runs in the "
        "foreground (the twin of the search.generate_topic_tree job); --background queues it."
    )

    def add_arguments(self, parser):
        parser.add_argument("--name", required=True, help="Name of the new tree (unique).")
        parser.add_argument("--engine", required=True, help="Name of an enabled chat engine.")
        parser.add_argument("--root", action="append", required=True, dest="roots",
                            help="A root domain; repeat for several.")  # fmt: skip
        parser.add_argument("--depth", type=int, default=2)
        parser.add_argument("--branching", type=int, default=5)
        parser.add_argument("--language", default="en")
        parser.add_argument("--background", action="store_true", help="Queue it for a worker.")

    def handle(self, *args, **options):
        try:
            tree = start_tree_generation(
                options["name"],
                options["engine"],
                options["roots"],
                options["depth"],
                options["branching"],
                options["language"],
                enqueue=options["background"],
            )
        except TopicTreeError as exc:
            raise CommandError(str(exc)) from exc
        if options["background"]:
            self.stdout.write(f"Queued generation of {tree.name!r} (id {tree.pk}).")
            return
        tree = generate_topic_tree(tree.pk)
        if tree.status == TopicTree.Status.FAILED:
            raise CommandError(f"generation of {tree.name!r} (id {tree.pk}) failed: {tree.error}")
        self.stdout.write(
            self.style.SUCCESS(
                f"Generated topic tree {tree.name!r} (id {tree.pk}): {tree.n_topics} topics, "
                f"{tree.n_leaves} leaves."
            )
        )
