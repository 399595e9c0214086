"""Forms for topic trees and corpora (parse input; services do the work)."""

from __future__ import annotations

from django import forms

from core.uploads import UploadField
from engines.models import Engine
from search.topics.generation import BRANCHING_RANGE, DEPTH_RANGE

# An upload is read into memory by the importer; larger trees go through the command or the API.


def chat_engines():
    """Enabled engines configured for chat (capabilities is a JSON list: filtered here, since
    SQLite has no JSON containment lookup; engines are few)."""
    enabled = Engine.objects.filter(enabled=True).order_by("name")
    return enabled.filter(pk__in=[e.pk for e in enabled if e.has_capability("chat")])


class TreeImportForm(forms.Form):
    name = forms.CharField(max_length=200)
    file = UploadField(
        help_text='Nested JSON {"Root": {"Child": {}}} or a JSON list of topic names.',
    )
    language = forms.CharField(max_length=16, initial="en")
    description = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 2}), max_length=2000
    )


class TreeGenerateForm(forms.Form):
    name = forms.CharField(max_length=200)
    engine = forms.ModelChoiceField(
        queryset=Engine.objects.none(), to_field_name="name", empty_label=None
    )
    roots = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 4, "placeholder": "Contract law\nFootball"}),
        help_text="Root domains, one per line; each becomes a top-level topic.",
    )
    depth = forms.IntegerField(
        min_value=DEPTH_RANGE[0],
        max_value=DEPTH_RANGE[1],
        initial=2,
        help_text="Levels of subtopics below each root.",
    )
    branching = forms.IntegerField(
        min_value=BRANCHING_RANGE[0],
        max_value=BRANCHING_RANGE[1],
        initial=5,
        help_text="Children per topic.",
    )
    language = forms.CharField(max_length=16, initial="en")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["engine"].queryset = chat_engines()

    def root_list(self) -> list[str]:
        return [line.strip() for line in self.cleaned_data["roots"].splitlines() if line.strip()]


class CorpusUploadForm(forms.Form):
    file = UploadField(
        help_text='JSONL: {"topic", "text", "source_url"} per line.',
    )
