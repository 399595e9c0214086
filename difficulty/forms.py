"""Forms for difficulty datasets and evaluations (parse input; services do the work)."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from django import forms
from django.core.exceptions import ValidationError
from django.http import QueryDict

from core.uploads import UploadField
from difficulty.dataset_format import (
    DEFAULT_REFERENCE_NAMES,
    DEFAULT_REFERENCE_PREFIXES,
    ReferenceRule,
    comma_list,
    split_language_pair,
)
from difficulty.selectors import EstimatorOption
from difficulty.services import DA_SCORE_KINDS, DATASET_FORMATS

if TYPE_CHECKING:
    from annotation.models import Campaign


def validate_language_pair(value: str) -> None:
    """A language pair field's validator (the page's form and the API's body): ``en-de``."""
    try:
        split_language_pair(value)
    except ValueError as exc:
        raise ValidationError(str(exc)) from None


class _ReferenceFields(forms.Form):
    reference_systems = forms.CharField(
        required=False,
        initial=", ".join(DEFAULT_REFERENCE_NAMES),
        help_text="Human reference translators, left out of evaluation by default.",
    )
    reference_prefixes = forms.CharField(
        required=False,
        initial=", ".join(DEFAULT_REFERENCE_PREFIXES),
        help_text="Systems whose name starts with one of these (any case) are references too.",
    )

    def reference_rule(self) -> ReferenceRule:
        data = self.cleaned_data
        return ReferenceRule.from_text(data["reference_systems"], data["reference_prefixes"])


class DatasetUploadForm(_ReferenceFields):
    name = forms.CharField(max_length=200)
    description = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), required=False)
    file = UploadField(
        help_text="WMT-style JSONL (langs, src, tgt{system}, scores{system}; other fields kept), "
        "a Google MQM TSV (one row per error per rater) or Google's .tar.gz of one, an "
        "mt-metrics-eval test set as a .tar.gz or .zip, or a WMT DA release (its means file, or "
        "a .zip / .tar.gz with its judgments).",
    )
    file_format = forms.ChoiceField(
        label="File format",
        choices=list(DATASET_FORMATS.items()),
        initial="auto",
        required=False,
        help_text="A file that looks like another format is refused with the right one named.",
    )
    langs = forms.CharField(
        label="Language pair",
        max_length=40,
        required=False,
        validators=[validate_language_pair],
        help_text="Of a Google MQM TSV, e.g. en-de; read from a name like mqm_ted_ende.tsv "
        "when empty. JSONL lines name their own. In an mt-metrics-eval or WMT DA release: "
        "import only this pair (empty: all).",
    )
    human_score = forms.CharField(
        label="Human score (mt-metrics-eval)",
        max_length=100,
        required=False,
        widget=forms.TextInput(attrs={"list": "human-score-names"}),
        help_text="Which human-scores/{lp}.NAME.seg.score to import: mqm, wmt, wmt-z, "
        "wmt-appraise, ... Empty: the only one; if there are several, the refusal lists them.",
    )
    test_set = forms.CharField(
        label="Test set (mt-metrics-eval)",
        max_length=100,
        required=False,
        help_text="Of an archive holding several (wmt22, wmt23, ...).",
    )
    score_kind = forms.ChoiceField(
        label="DA score (WMT DA)",
        choices=list(DA_SCORE_KINDS.items()),
        initial="z",
        required=False,
        help_text="Which per-segment means of a WMT DA release become the scores.",
    )
    perfect_score = forms.FloatField(
        initial=100.0, help_text="Human score of a flawless translation (ESA: 100)."
    )

    field_order = [
        "name", "description", "file", "file_format", "langs", "human_score", "test_set",
        "score_kind", "reference_systems", "reference_prefixes",
    ]  # fmt: skip

    def clean_file_format(self) -> str:
        return self.cleaned_data["file_format"] or "auto"

    def clean_score_kind(self) -> str:
        return self.cleaned_data["score_kind"] or "z"

    def release_choices(self) -> dict[str, str]:
        """What the import service takes besides the file, as the form says it."""
        data = self.cleaned_data
        return {
            "file_format": data["file_format"],
            "language_pair": data["langs"],
            "human_score": data["human_score"].strip(),
            "test_set": data["test_set"].strip(),
            "score_kind": data["score_kind"],
        }


class CampaignDatasetForm(_ReferenceFields):
    campaign: forms.ModelChoiceField[Campaign] = forms.ModelChoiceField(
        queryset=None, empty_label=None
    )
    name = forms.CharField(max_length=200)
    description = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), required=False)

    field_order = ["campaign", "name", "description"]

    def __init__(self, *args, campaigns=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["campaign"].queryset = campaigns
        self.fields["campaign"].label_from_instance = lambda c: (
            f"{c.name} ({c.protocol.upper()}, {c.get_status_display().lower()})"
        )


DEFAULT_CHECKED = ("length", "chars", "rarity", "syntax", "random", "oracle-src", "oracle-src-lang")


class EvaluateForm(forms.Form):
    estimators = forms.MultipleChoiceField(required=False, widget=forms.CheckboxSelectMultiple)
    other_estimators = forms.CharField(
        required=False,
        label="Other estimators",
        help_text="Comma-separated names, e.g. metric:-mqm or llm-judge:my-engine.",
    )
    subset_fraction = forms.FloatField(
        initial=0.25, min_value=0.01, max_value=1.0, label="Hardest-subset fraction per pair"
    )
    seed = forms.IntegerField(initial=0, min_value=0, max_value=2**62)
    n_bootstrap = forms.IntegerField(
        initial=1000, min_value=0, max_value=10_000, label="Bootstrap resamples (CI)"
    )
    include_references = forms.BooleanField(
        required=False, label="Also evaluate against human reference systems"
    )

    def __init__(self, *args, options: list[EstimatorOption], **kwargs):
        super().__init__(*args, **kwargs)
        self.options = options
        estimators = cast(forms.ChoiceField, self.fields["estimators"])
        estimators.choices = [(o.name, o.name) for o in options if o.available]
        # Ticked boxes: what was posted, or by default every available offline estimator.
        if self.is_bound:
            self.checked = set(cast(QueryDict, self.data).getlist("estimators"))
        else:
            self.checked = {o.name for o in options if o.available and o.name in DEFAULT_CHECKED}

    def clean(self):
        cleaned = super().clean()
        names = list(cleaned.get("estimators") or [])
        names += [n for n in comma_list(cleaned.get("other_estimators", "")) if n not in names]
        if not names:
            raise forms.ValidationError("Choose at least one estimator.")
        cleaned["estimator_names"] = names
        return cleaned
