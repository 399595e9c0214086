from django.core.management.base import BaseCommand, CommandError

from difficulty.models import DifficultyEvaluation
from difficulty.services import DifficultyDatasetError, run_difficulty_evaluation


class Command(BaseCommand):
    help = (
        "Run a queued or interrupted difficulty evaluation to the end in the foreground "
        "(the twin of the search.advance_difficulty_evaluation Celery task)."
    )

    def add_arguments(self, parser):
        parser.add_argument("evaluation_id", type=int)

    def handle(self, *args, evaluation_id: int, **options):
        if not DifficultyEvaluation.objects.filter(pk=evaluation_id).exists():
            raise CommandError(f"there is no difficulty evaluation {evaluation_id}")
        try:
            evaluation = run_difficulty_evaluation(evaluation_id)
        except DifficultyDatasetError as exc:
            raise CommandError(str(exc)) from exc
        if evaluation.status != DifficultyEvaluation.Status.DONE:
            raise CommandError(
                f"evaluation {evaluation_id} is {evaluation.status}: {evaluation.error}"
            )
        self.stdout.write(self.style.SUCCESS(f"Evaluation {evaluation_id} is done."))
