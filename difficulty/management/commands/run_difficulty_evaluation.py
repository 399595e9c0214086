from core.commands import RunQueuedJobCommand
from difficulty.models import DifficultyEvaluation
from difficulty.services import DEC_EVALUATIONS, run_difficulty_evaluation


class Command(RunQueuedJobCommand):
    help = (
        "Run a queued or interrupted difficulty evaluation to the end in the foreground "
        "(the twin of the search.advance_difficulty_evaluation Celery task)."
    )
    jobs = DEC_EVALUATIONS
    id_argument = "evaluation_id"
    missing = "difficulty evaluation"

    def run(self, pk: int) -> DifficultyEvaluation:
        return run_difficulty_evaluation(pk)  # a round runs every unit left (no time budget)

    def failed(self, job: DifficultyEvaluation) -> str:
        return f"evaluation {job.pk} is {job.status}: {job.error}"

    def done(self, job: DifficultyEvaluation) -> str:
        return f"Evaluation {job.pk} is done."
