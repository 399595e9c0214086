"""Write use-cases of the difficulty app: datasets (:mod:`.datasets`) and DEC evaluations
(:mod:`.evaluations`), re-exported here as the app's one service surface."""

from difficulty.dataset_format import DatasetFormatError
from difficulty.services.datasets import (
    DATASET_FORMATS,
    DifficultyDatasetError,
    build_difficulty_dataset_from_campaign,
    check_dataset_name,
    import_difficulty_dataset,
    import_difficulty_file,
    import_mqm_tsv_dataset,
)
from difficulty.services.evaluations import (
    ADVANCE_TASK,
    DEC_EVALUATIONS,
    advance_difficulty_evaluation,
    cancel_difficulty_evaluation,
    enqueue_evaluation_round,
    evaluation_queue,
    recover_evaluations,
    run_difficulty_evaluation,
    start_difficulty_evaluation,
)

__all__ = [
    "ADVANCE_TASK",
    "DATASET_FORMATS",
    "DEC_EVALUATIONS",
    "DatasetFormatError",
    "DifficultyDatasetError",
    "advance_difficulty_evaluation",
    "build_difficulty_dataset_from_campaign",
    "cancel_difficulty_evaluation",
    "check_dataset_name",
    "enqueue_evaluation_round",
    "evaluation_queue",
    "import_difficulty_dataset",
    "import_difficulty_file",
    "import_mqm_tsv_dataset",
    "recover_evaluations",
    "run_difficulty_evaluation",
    "start_difficulty_evaluation",
]
