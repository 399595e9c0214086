"""Write use-cases of the difficulty app: datasets (:mod:`.datasets`, dispatched by format in
:mod:`.dataset_files`) and DEC evaluations (:mod:`.evaluations`), re-exported here as the app's
one service surface."""

from difficulty.dataset_format import DatasetFormatError
from difficulty.services.dataset_files import (
    DA_SCORE_KINDS,
    DATASET_FORMATS,
    import_difficulty_file,
    import_difficulty_path,
    import_release_files,
)
from difficulty.services.datasets import (
    DifficultyDatasetError,
    build_difficulty_dataset_from_campaign,
    check_dataset_name,
    import_difficulty_dataset,
    import_mqm_tsv_dataset,
    import_mtme_dataset,
    import_wmt_da_dataset,
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
    "DA_SCORE_KINDS",
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
    "import_difficulty_path",
    "import_mqm_tsv_dataset",
    "import_mtme_dataset",
    "import_release_files",
    "import_wmt_da_dataset",
    "recover_evaluations",
    "run_difficulty_evaluation",
    "start_difficulty_evaluation",
]
