from django.contrib import admin

from core.admin import ReadOnlyAdmin
from difficulty.models import DifficultyDataset, DifficultyEvaluation

# --- Difficulty datasets and evaluations (seed 002) ------------------------------------------


# Datasets are written by the importer and evaluations by their rounds; the admin looks.
@admin.register(DifficultyDataset)
class DifficultyDatasetAdmin(ReadOnlyAdmin):
    list_display = ["name", "origin", "n_segments", "n_language_pairs", "n_systems", "created_at"]
    list_filter = ["origin"]
    search_fields = ["name", "description", "source_campaign_name", "source_file_name"]


@admin.register(DifficultyEvaluation)
class DifficultyEvaluationAdmin(ReadOnlyAdmin):
    list_display = ["id", "dataset", "status", "progress_done", "progress_total", "created_at"]
    list_filter = ["status"]
    exclude = ["state"]
