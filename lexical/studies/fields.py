"""The recruiting choices both seed 004 study forms ask (see ``lexical.recruiting``)."""

from __future__ import annotations

from django import forms

__all__ = ["native_speakers_field", "one_study_per_person_field"]


def native_speakers_field() -> forms.BooleanField:
    return forms.BooleanField(
        required=False, initial=True, label="Only native speakers of the target language"
    )


def one_study_per_person_field(other_study: str) -> forms.BooleanField:
    """Ticked by default: seed 004's two studies must not share annotators, since judging the
    rules would shape the choices (lexical.recruiting). Unticking it is the exception."""
    return forms.BooleanField(
        required=False,
        initial=True,
        label="One study of this language per person",
        help_text=f"Annotators of this study cannot join {other_study}, and the other way round.",
    )
