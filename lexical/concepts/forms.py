"""Forms of the concept pages: filters, edits and example selection (parse only)."""

from __future__ import annotations

from typing import Any, cast

from django import forms
from django.db.models import Count, Q

from lexical.concepts.selection import SelectionParams
from lexical.concepts.selectors import ConceptFilters
from lexical.models import Concept, MiningJob


class ConceptFilterForm(forms.Form):
    tgt_lang = forms.CharField(required=False, max_length=16, label="Target language")
    mining_job = forms.IntegerField(required=False, min_value=1, max_value=2**63 - 1)
    status = forms.ChoiceField(
        required=False, choices=[("", "any"), *Concept.Status.choices], label="Status"
    )
    pos = forms.CharField(required=False, max_length=16, label="POS")
    q = forms.CharField(required=False, max_length=200, label="Lemma")

    def filters(self) -> ConceptFilters:
        if not self.is_valid():
            return ConceptFilters()
        data = self.cleaned_data
        return ConceptFilters(
            tgt_lang=data["tgt_lang"].strip(),
            mining_job=data["mining_job"],
            status=data["status"],
            pos=data["pos"].strip(),
            q=data["q"].strip(),
        )


class MergeForm(forms.Form):
    keep = forms.IntegerField(min_value=1, max_value=2**63 - 1)
    absorb = forms.IntegerField(min_value=1, max_value=2**63 - 1, label="Merge into it")


class SplitForm(forms.Form):
    variation = forms.IntegerField(min_value=1, max_value=2**63 - 1)
    surface_forms = forms.CharField(
        max_length=2000, help_text="Comma-separated surface forms to move to a new variation."
    )
    lemma = forms.CharField(max_length=200, required=False, help_text="Default: the first form.")

    def forms_to_move(self) -> list[str]:
        return [f.strip() for f in self.cleaned_data["surface_forms"].split(",") if f.strip()]


class RejectForm(forms.Form):
    note = forms.CharField(max_length=2000, required=False, widget=forms.TextInput)


def finished_mining_jobs(limit: int = 200) -> list[tuple[str, str]]:
    """(id, label) of the finished mining jobs, newest first, with their active concepts."""
    active = Count("concepts", filter=Q(concepts__status=Concept.Status.ACTIVE))
    jobs = (
        MiningJob.objects.filter(status=MiningJob.Status.FINISHED)
        .select_related("corpus")
        .annotate(n_active=active)
        .order_by("-finished_at", "-pk")[:limit]
    )
    return [
        (str(job.pk), f"#{job.pk} {job.corpus.name} ({job.corpus.src_lang}→{job.corpus.tgt_lang}"
         f", {job.n_active} active concept{'s' if job.n_active != 1 else ''})")
        for job in jobs
    ]  # fmt: skip


class SelectionForm(forms.Form):
    name = forms.CharField(max_length=200)
    mining_job = forms.TypedChoiceField(
        coerce=int,
        empty_value=None,
        required=False,
        help_text="A finished mining job: all its active concepts.",
    )
    concepts = forms.CharField(
        required=False,
        max_length=20000,
        help_text="Or comma-separated concept ids, all of one language pair.",
    )
    seed = forms.IntegerField(
        required=False,
        min_value=0,
        max_value=2**63 - 1,
        help_text="Empty: a random seed, stored with the selection.",
    )
    max_concepts = forms.IntegerField(initial=20, min_value=1, max_value=10_000)
    pairs_per_concept = forms.IntegerField(initial=10, min_value=2, max_value=1000)
    tolerance = forms.FloatField(
        initial=0.20, min_value=0, max_value=1, label="Uniformity tolerance"
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = cast(forms.TypedChoiceField, self.fields["mining_job"])
        field.choices = [("", "— or list concept ids below —"), *finished_mining_jobs()]

    def clean_concepts(self) -> list[int]:
        raw = self.cleaned_data["concepts"]
        ids = []
        for part in raw.split(","):
            part = part.strip()
            if not part:
                continue
            if not part.isdigit() or not 0 < int(part) < 2**63:
                raise forms.ValidationError(f"{part[:20]!r} is not a concept id")
            ids.append(int(part))
        return ids

    def clean(self):
        data = super().clean()
        if not self.errors and not data.get("mining_job") and not data.get("concepts"):
            raise forms.ValidationError("Choose a mining job or list concept ids.")
        return data

    def params(self) -> SelectionParams:
        data = self.cleaned_data
        return SelectionParams(
            max_concepts=data["max_concepts"],
            pairs_per_concept=data["pairs_per_concept"],
            tolerance=data["tolerance"],
        )
