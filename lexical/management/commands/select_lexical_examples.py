from django.core.management.base import BaseCommand, CommandError

from lexical.concepts.selection import SelectionParams
from lexical.concepts.services import (
    SelectionError,
    concepts_to_select,
    create_example_selection,
)
from lexical.models import Concept


def _ids(value: str) -> list[int]:
    try:
        ids = [int(part) for part in value.split(",") if part.strip()]
    except ValueError:
        raise CommandError(f"--concepts takes comma-separated ids, not {value[:40]!r}") from None
    if any(not 0 < i < 2**63 for i in ids):
        raise CommandError("concept ids are positive integers")
    return ids


class Command(BaseCommand):
    help = (
        "Select examples for a lexical-selection study (seed 004 App. A.2) from a mining job's "
        "concepts or listed concepts of one language pair: at most --max-concepts concepts, "
        "--pairs-per-concept pairs each with every variation at least once. The seed is stored "
        "(random when not given); the same seed selects the same examples."
    )

    def add_arguments(self, parser):
        parser.add_argument("--name", required=True)
        parser.add_argument("--mining-job", type=int)
        parser.add_argument("--concepts", default="", help="Comma-separated concept ids.")
        parser.add_argument("--seed", type=int)
        parser.add_argument("--max-concepts", type=int, default=20)
        parser.add_argument("--pairs-per-concept", type=int, default=10)
        parser.add_argument("--tolerance", type=float, default=0.20)

    def handle(self, *args, **options):
        try:
            params = SelectionParams(
                max_concepts=options["max_concepts"],
                pairs_per_concept=options["pairs_per_concept"],
                tolerance=options["tolerance"],
            )
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        try:
            concepts, source = concepts_to_select(
                Concept.objects.all(),
                mining_job=options["mining_job"],
                concept_ids=_ids(options["concepts"]),
            )
            selection = create_example_selection(
                concepts, name=options["name"], seed=options["seed"], params=params, source=source
            )
        except SelectionError as exc:
            raise CommandError(f"nothing was written: {exc}") from None
        self.stdout.write(
            self.style.SUCCESS(
                f"Selection {selection.name!r} (id {selection.pk}, seed {selection.seed}): "
                f"{selection.concepts.count()} concepts, {selection.selected.count()} examples, "
                f"{selection.src_lang}→{selection.tgt_lang}."
            )
        )
