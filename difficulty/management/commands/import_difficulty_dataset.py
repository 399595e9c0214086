from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.formats import google_mqm
from core.command_io import problems_error, reading
from difficulty.dataset_format import (
    DEFAULT_REFERENCE_NAMES,
    DEFAULT_REFERENCE_PREFIXES,
    DatasetFormatError,
    ReferenceRule,
)
from difficulty.services import (
    DA_SCORE_KINDS,
    DATASET_FORMATS,
    DifficultyDatasetError,
    import_difficulty_path,
)


class Command(BaseCommand):
    help = (
        "Import a difficulty dataset from a file, a folder or an archive (.tar.gz, .tgz, .zip) "
        "as the field releases it: WMT-style JSONL; a Google MQM TSV or Google's .tar.gz of one "
        "(languages from --langs or a name like mqm_ted_ende.tsv); an mt-metrics-eval test set "
        "(--score picks the human score); a WMT crowd-DA release (ad-seg-scores-XX-YY.csv with "
        "its ad-XXYY-good-stnd.csv judgments). Recognised unless --format says. All or nothing: "
        "a bad line is reported with its file and nothing is written."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path, help="A file, an archive or a release's folder.")
        parser.add_argument("--name", required=True)
        parser.add_argument("--description", default="")
        parser.add_argument(
            "--format",
            dest="file_format",
            choices=list(DATASET_FORMATS),
            default="auto",
            help="auto (default: recognise it), wmt-jsonl, google-mqm (one row per error per "
            "rater), mt-metrics-eval or wmt-da.",
        )
        parser.add_argument(
            "--langs",
            default="",
            help="Language pair of a google-mqm file (default: read from a name like "
            "mqm_ted_ende.tsv) or of a WMT DA means file named otherwise; for an mt-metrics-eval "
            "or WMT DA release, import only this pair (default: every pair).",
        )
        parser.add_argument(
            "--score",
            dest="human_score",
            default="",
            help="mt-metrics-eval: the human score to import (mqm, wmt, wmt-z, wmt-appraise, "
            "...; default: the only one; the refusal lists those found).",
        )
        parser.add_argument(
            "--test-set",
            default="",
            help="mt-metrics-eval: the test set (wmt22, ...) of a release that holds several.",
        )
        parser.add_argument(
            "--da-score",
            dest="score_kind",
            choices=list(DA_SCORE_KINDS),
            default="z",
            help="WMT DA: the per-segment means to import as scores (default: z, as WMT ranks).",
        )
        parser.add_argument(
            "--reference-systems",
            default=",".join(DEFAULT_REFERENCE_NAMES),
            help="Comma-separated human reference systems, left out of evaluation by default "
            "(default: %(default)s; an empty string for none).",
        )
        parser.add_argument(
            "--reference-prefixes",
            default=",".join(DEFAULT_REFERENCE_PREFIXES),
            help="Comma-separated name prefixes (any case) that also mark references "
            "(default: %(default)s).",
        )
        parser.add_argument(
            "--perfect-score",
            type=float,
            default=100.0,
            help="Score of a flawless translation, for %%Perfect (default 100, ESA; 0 for "
            "mt-metrics-eval's mqm, which is minus the MQM penalty).",
        )

    def handle(self, *args, file: Path, **options):
        if not file.exists():
            raise CommandError(f"{file} does not exist")
        if (
            options["file_format"] == "google-mqm"
            and file.is_file()
            and not options["langs"]
            and not google_mqm.language_pair_in_name(file.name)
        ):
            raise CommandError(
                "a google-mqm file names no languages, nor does its file name: give --langs en-de"
            )
        rule = ReferenceRule.from_text(options["reference_systems"], options["reference_prefixes"])
        try:
            with reading(file):
                dataset = import_difficulty_path(
                    file,
                    name=options["name"],
                    file_format=options["file_format"],
                    language_pair=options["langs"],
                    human_score=options["human_score"],
                    test_set=options["test_set"],
                    score_kind=options["score_kind"],
                    description=options["description"],
                    reference_rule=rule,
                    perfect_score=options["perfect_score"],
                )
        except DatasetFormatError as exc:
            more = " (more not shown)" if exc.truncated else ""
            raise problems_error(
                f"{file} was not imported; nothing was written{more}", exc.errors
            ) from None
        except DifficultyDatasetError as exc:
            raise CommandError(f"{file} was not imported: {exc}") from exc
        self._describe(dataset)

    def _describe(self, dataset) -> None:
        pairs = list(dataset.language_pairs.defer("judgments").prefetch_related("systems"))
        references = sorted(
            {s.name for pair in pairs for s in pair.systems.all() if s.is_reference}
        )
        judgments = sum(pair.n_judgments for pair in pairs)
        kept = f"; {judgments:,} individual judgments kept" if judgments else ""
        self.stdout.write(
            self.style.SUCCESS(
                f"Imported {dataset.name!r} (id {dataset.pk}): {dataset.n_segments} segments, "
                f"{dataset.n_language_pairs} language pair(s), {dataset.n_systems} systems; "
                f"references left out of evaluation: {', '.join(references) or 'none'}{kept}."
            )
        )
        for line in dataset.import_report_lines():
            self.stdout.write(f"Note: {line}.")
