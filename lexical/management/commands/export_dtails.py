from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.models import Campaign
from lexical.dtails import exports
from lexical.models import ExampleSelection


class Command(BaseCommand):
    help = (
        "Write a DTAiLS CSV in the released shape: the examples of an example selection "
        "(--selection ID, label = the attested variation) or the items of a finished "
        "lexical-selection study with sufficient context (--campaign ID). With --extended, a "
        "study's every item with its votes, majority and agreement instead."
    )

    def add_arguments(self, parser):
        source = parser.add_mutually_exclusive_group(required=True)
        source.add_argument("--selection", type=int)
        source.add_argument("--campaign", type=int)
        parser.add_argument("--extended", action="store_true")
        parser.add_argument("--output", "-o", help="File to write (default: standard output).")

    def handle(self, *args, **options):
        data = self._export(options)
        if options["output"]:
            Path(options["output"]).write_bytes(data)
            self.stderr.write(f"Wrote {options['output']} ({len(data)} bytes).")
        else:
            self.stdout.write(data.decode("utf-8"), ending="")

    def _export(self, options) -> bytes:
        if options["selection"] is not None:
            if options["extended"]:
                raise CommandError("--extended is for studies (--campaign)")
            selection = ExampleSelection.objects.filter(pk=options["selection"]).first()
            if selection is None:
                raise CommandError(f"no selection #{options['selection']}")
            return exports.selection_csv(selection)
        campaign = Campaign.objects.filter(pk=options["campaign"]).first()
        if campaign is None or not exports.is_study(campaign):
            raise CommandError(
                f"campaign #{options['campaign']} is not a lexical-selection study (a choice "
                "campaign with lexical_selection items)"
            )
        if options["extended"]:
            return exports.study_extended_csv(campaign)
        return exports.study_released_csv(campaign)
