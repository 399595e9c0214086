"""The DTAiLS upload form: files and languages; the import service checks the rest."""

from __future__ import annotations

from django import forms

from core.uploads import UploadField


class DtailsImportForm(forms.Form):
    name = forms.CharField(
        max_length=200, help_text="The new example selection's name (must be unused)."
    )
    src_lang = forms.CharField(max_length=16, initial="en", label="Source language")
    tgt_lang = forms.CharField(max_length=16, label="Target language", help_text="e.g. gl, af, ja")
    csv_file = UploadField(
        label="DTAiLS CSV",
        help_text="expert_dataset.csv or train_dataset.csv",
    )
    words_file = UploadField(
        required=False,
        label="Words file (optional)",
        help_text="xx.words: POS tags and every variation of each concept",
    )
    keep_duplicates = forms.BooleanField(
        required=False,
        label="Keep repeated rows",
        help_text="Import a row that repeats an earlier one as a second example, as the file "
        "has it (the selection exports back to the same bytes), instead of once.",
    )
