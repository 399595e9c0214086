from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.formats import google_mqm
from core.command_io import problems_error
from difficulty.dataset_format import (
    DEFAULT_REFERENCE_NAMES,
    DEFAULT_REFERENCE_PREFIXES,
    DatasetFormatError,
    ReferenceRule,
)
from difficulty.services import DATASET_FORMATS, DifficultyDatasetError, import_difficulty_file


def comma_list(value: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in value.split(",") if part.strip())


class Command(BaseCommand):
    help = (
        "Import a difficulty dataset: WMT-style JSONL (langs, src, tgt{system}, scores{system}, "
        "extra fields kept) or Google's MQM TSV (languages from --langs en-de or a name like "
        "mqm_ted_ende.tsv), recognised from line 1 unless --format says. All or nothing: a bad "
        "line is reported and nothing is written."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)
        parser.add_argument("--name", required=True)
        parser.add_argument("--description", default="")
        parser.add_argument(
            "--format",
            dest="file_format",
            choices=list(DATASET_FORMATS),
            default="auto",
            help="auto (default: recognise it), wmt-jsonl or google-mqm (one row per error per "
            "rater).",
        )
        parser.add_argument(
            "--langs",
            default="",
            help="Language pair of a google-mqm file (default: read from a name like "
            "mqm_ted_ende.tsv).",
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
            help="Score of a flawless translation, for %%Perfect (default 100, ESA).",
        )

    def handle(self, *args, file: Path, **options):
        if not file.is_file():
            raise CommandError(f"{file} is not a file")
        rule = ReferenceRule(
            names=comma_list(options["reference_systems"]),
            prefixes=comma_list(options["reference_prefixes"]),
        )
        file_format = options["file_format"]
        if (
            file_format == "google-mqm"
            and not options["langs"]
            and not google_mqm.language_pair_in_name(file.name)
        ):
            raise CommandError(
                "a google-mqm file names no languages, nor does its file name: give --langs en-de"
            )
        try:
            with file.open("rb") as lines:
                dataset = import_difficulty_file(
                    lines,
                    name=options["name"],
                    file_format=file_format,
                    language_pair=options["langs"],
                    description=options["description"],
                    reference_rule=rule,
                    source_file_name=file.name,
                    perfect_score=options["perfect_score"],
                )
        except DatasetFormatError as exc:
            more = " (more not shown)" if exc.truncated else ""
            raise problems_error(
                f"{file} was not imported; nothing was written{more}", exc.errors
            ) from None
        except DifficultyDatasetError as exc:
            raise CommandError(f"{file} was not imported: {exc}") from exc
        references = sorted(
            {
                system.name
                for pair in dataset.language_pairs.all()
                for system in pair.systems.filter(is_reference=True)
            }
        )
        self.stdout.write(
            self.style.SUCCESS(
                f"Imported {dataset.name!r} (id {dataset.pk}): {dataset.n_segments} segments, "
                f"{dataset.n_language_pairs} language pair(s), {dataset.n_systems} systems; "
                f"references left out of evaluation: {', '.join(references) or 'none'}."
            )
        )
        for line in dataset.import_report_lines():
            self.stdout.write(f"Note: {line}.")
