"""The corpus upload form: parse and check the options; the import service does the work."""

from __future__ import annotations

from django import forms

from core.uploads import UploadField
from lexical.corpora.services import CorpusImportError, CorpusSource, check_corpus_options

FORMAT_CHOICES = [
    ("moses", "Two aligned plain-text files (OPUS / Moses)"),
    ("tsv", "TSV: source<TAB>target per line"),
    ("jsonl", 'JSONL: {"src": ..., "tgt": ...} per line'),
]


class CorpusImportForm(forms.Form):
    name = forms.CharField(max_length=200)
    src_lang = forms.CharField(max_length=16, initial="en", label="Source language")
    tgt_lang = forms.CharField(max_length=16, label="Target language", help_text="e.g. es, af, ja")
    format = forms.ChoiceField(choices=FORMAT_CHOICES, initial="moses")
    src_file = UploadField(
        required=False,
        label="Source file (moses)",
        help_text="One sentence per line, e.g. OPUS's corpus.en-es.en.",
    )
    tgt_file = UploadField(
        required=False,
        label="Target file (moses)",
        help_text="Line i translates line i of the source file.",
    )
    file = UploadField(required=False, label="File (tsv or jsonl)")
    description = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), required=False)

    def clean(self):
        data = super().clean()
        try:
            name, src, tgt = check_corpus_options(
                name=data.get("name", ""),
                src_lang=data.get("src_lang", ""),
                tgt_lang=data.get("tgt_lang", ""),
            )
        except CorpusImportError as exc:
            self.add_error(exc.field if exc.field in self.fields else None, str(exc))
        else:
            data.update(name=name, src_lang=src, tgt_lang=tgt)
        if data.get("format") == "moses":
            for field in ("src_file", "tgt_file"):
                if not data.get(field) and field not in self.errors:
                    self.add_error(field, "The moses format needs both files.")
        elif data.get("format") and not data.get("file") and "file" not in self.errors:
            self.add_error("file", f"Choose the {data['format'].upper()} file.")
        return data

    def corpus_source(self) -> CorpusSource:
        return CorpusSource.from_upload(self.cleaned_data)
