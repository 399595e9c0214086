"""Forms of the annotation pages (admin settings, uploads, sign-up)."""

from __future__ import annotations

from django import forms
from django.contrib.auth import get_user_model, password_validation
from django.contrib.auth.validators import UnicodeUsernameValidator

from annotation import assignment, formats, languages, protocols, scoring
from annotation.models import Campaign
from core.uploads import UploadField

_WEIGHT_FIELDS = {
    "weight_minor": ("minor", "Minor"),
    "weight_major": ("major", "Major"),
    "weight_critical": ("critical", "Critical"),
    "weight_minor_punctuation": ("minor_punctuation", "Minor punctuation"),
    "weight_non_translation": ("non_translation", "Non-translation"),
}

# Forms (and scripts posting them) written before adaptive campaigns leave these out.
_ASSIGNMENT_DEFAULTS = {
    "assignment_policy": assignment.DEFAULT,
    "assignment_goal": Campaign.Goal.TOP,
    "assignment_alpha": 0.05,
    "assignment_tolerance": 0.0,
}


class CampaignForm(forms.ModelForm):
    """Campaign settings; the MQM weights are edited as numbers and stored as overrides."""

    # The registry, read when the form is built, so a protocol registered later is offered.
    protocol = forms.ChoiceField(
        choices=protocols.choices, help_text="Cannot be changed once there are annotations."
    )

    # The registry, read when the form is built: ranking registers its policies when it loads.
    assignment_policy = forms.ChoiceField(
        label="Assignment policy",
        choices=assignment.choices,
        required=False,
        help_text="In order: every item at its overlap, as always. Uniform, Pearmut and Settle "
        "hand out the (system, segment) items of a multi-system campaign adaptively and close "
        "the campaign once the goal is settled.",
    )

    prolific_completion_url = forms.URLField(
        label="Prolific completion URL",
        required=False,
        assume_scheme="https",
        initial="https://app.prolific.com/submissions/complete",
        help_text="Participants are sent to <url>?cc=<pass or fail code>.",
    )

    class Meta:
        model = Campaign
        fields = [
            "name", "protocol", "src_lang", "tgt_lang", "overlap", "status", "instructions",
            "signup_open", "invite_token", "require_approval", "require_qualification",
            "qualification_min_accuracy", "max_items_per_annotator",
            "required_native_languages", "required_working_languages", "exclusive_group",
            "prolific_completion_url", "prolific_pass_code", "prolific_fail_code",
            "qc_min_pass_rate", "qc_min_checks", "qc_min_seconds_per_item", "qc_max_fast_fraction",
            "mqm_allow_critical", "multi_select", "ask_confidence", "confidence_labels", "tie_rule",
            "shuffle_items", "claim_ttl_seconds", "assignment_policy", "assignment_goal",
            "assignment_alpha", "assignment_tolerance", "assignment_prior",
        ]  # fmt: skip
        widgets = {"instructions": forms.Textarea(attrs={"rows": 4})}
        # Plain words on the page rather than the field names derived from the model.
        labels = {
            "src_lang": "Source language",
            "tgt_lang": "Target language",
            "overlap": "Annotators per item",
            "signup_open": "Sign-up open",
            "invite_token": "Invitation code",
            "require_approval": "Approve annotators by hand",
            "require_qualification": "Require the tutorial",
            "qualification_min_accuracy": "Tutorial pass mark",
            "max_items_per_annotator": "Items per annotator (at most)",
            "exclusive_group": "Exclusive group",
            "prolific_pass_code": "Prolific completion code (passed quality control)",
            "prolific_fail_code": "Prolific completion code (failed quality control)",
            "qc_min_pass_rate": "Attention checks to pass",
            "qc_min_checks": "Attention checks before a verdict",
            "qc_min_seconds_per_item": "Shortest credible time per item (seconds)",
            "qc_max_fast_fraction": "Largest share of too-fast items",
            "mqm_allow_critical": "Offer the Critical severity (MQM)",
            "multi_select": "Several choices per question",
            "ask_confidence": "Ask how confident the annotator is",
            "tie_rule": "Majority vote: when the top options tie",
            "shuffle_items": "Shuffle the item order per annotator",
            "claim_ttl_seconds": "Time to finish an item (seconds)",
            "assignment_goal": "Goal to settle",
            "assignment_alpha": "Significance level (alpha)",
            "assignment_tolerance": "Tolerance (full ranking)",
            "assignment_prior": "Prior: item meta key of an automatic score",
        }
        help_texts = {
            "overlap": "How many annotators judge each item.",
            "src_lang": "e.g. en. Empty: taken from the first item.",
            "tgt_lang": "e.g. de. Empty: taken from the first item.",
            "signup_open": "Off: the sign-up link refuses new annotators.",
            "invite_token": "If set, the sign-up link only works with ?invite=<this value>.",
            "require_approval": "New annotators wait until staff approve them on this page.",
            "require_qualification": "Annotators must pass the tutorial items first.",
            "qualification_min_accuracy": "Share of tutorial items to get right, from 0 to 1.",
            "max_items_per_annotator": "Empty: as many as are left (typical for Prolific: set it).",
            "exclusive_group": "A short name, e.g. fa-studies. Someone enrolled in one campaign "
            "of the group cannot join another one of it. Empty: no exclusion.",
            "prolific_completion_url": "Participants are sent to <url>?cc=<pass or fail code>.",
            "qc_min_pass_rate": "Share of attention checks (0 to 1) an annotator must pass; "
            "below it the annotator fails quality control.",
            "qc_min_checks": "Quality control decides only after this many attention checks.",
            "qc_min_seconds_per_item": "Submissions faster than this count as too fast.",
            "qc_max_fast_fraction": "Share of items (0 to 1) that may be too fast before the "
            "annotator fails quality control.",
            "claim_ttl_seconds": "An item an annotator opened but left idle this long goes back "
            "to the pool (at least 60).",
            "tie_rule": 'Attested: the option in the item\'s meta "attested" wins a tie it is in.',
            "shuffle_items": "Each annotator sees the items in their own seeded order "
            "(recorded in the exports); off: by position.",
            "assignment_goal": "Adaptive policies: the campaign closes itself once this is "
            "settled at the significance level.",
            "assignment_alpha": "e.g. 0.05, between 0.001 and 0.5.",
            "assignment_tolerance": "Full ranking: systems whose mean scores differ by less "
            "than this may stay tied.",
            "assignment_prior": 'e.g. qe for items imported with "meta": {"qe": 71.5} (QE or '
            "a metric, 0 to 100). It orders the first segments; decisions rest on human scores.",
        }

    confidence_labels = forms.CharField(
        label="Confidence scale labels",
        required=False,
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text="One label per line, least to most confident (2 to 10), e.g. No idea / "
        "Likely but uncertain / Certain. Empty: a 1–5 scale.",
    )

    required_native_languages = forms.CharField(
        label="Native speakers of",
        required=False,
        max_length=300,
        help_text="Language codes, comma-separated, e.g. fa or pt-BR, pt-PT; annotators must "
        "declare one of them as their native language. pt accepts every variety of "
        "Portuguese. Empty: anyone.",
    )
    required_working_languages = forms.CharField(
        label="Also working in",
        required=False,
        max_length=300,
        help_text="Language codes that annotators must all speak (native or working), e.g. en. "
        "Empty: no requirement.",
    )

    # The settings page's groups of fields, each in page order (annotation/campaign_form.html).
    SECTIONS = {
        "campaign": ("name", "protocol", "src_lang", "tgt_lang", "overlap", "status"),
        "signup": (
            "signup_open", "invite_token", "require_approval", "require_qualification",
            "qualification_min_accuracy", "max_items_per_annotator", "required_native_languages",
            "required_working_languages", "exclusive_group", "prolific_completion_url",
            "prolific_pass_code", "prolific_fail_code", "claim_ttl_seconds",
        ),
        "quality": (
            "qc_min_pass_rate", "qc_min_checks", "qc_min_seconds_per_item", "qc_max_fast_fraction",
        ),
        "protocol_options": (
            "mqm_allow_critical", *_WEIGHT_FIELDS, "multi_select", "ask_confidence",
            "confidence_labels", "tie_rule", "shuffle_items",
        ),
    }  # fmt: skip

    @property
    def sections(self) -> dict[str, list[forms.BoundField]]:
        """The bound fields of each of :attr:`SECTIONS`, for the page to lay out."""
        return {name: [self[field] for field in fields] for name, fields in self.SECTIONS.items()}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.initial.setdefault("confidence_labels", "\n".join(self.instance.confidence_labels))
        for name in ("required_native_languages", "required_working_languages"):
            self.initial[name] = ", ".join(getattr(self.instance, name))
        # Forms (and scripts posting them) written before the setting existed leave it out.
        for name in ("tie_rule", *_ASSIGNMENT_DEFAULTS):
            self.fields[name].required = False
        defaults = scoring.DEFAULT_WEIGHTS.to_dict()
        current = self.instance.mqm_weights or {}
        for name, (key, label) in _WEIGHT_FIELDS.items():
            self.fields[name] = forms.FloatField(
                label=f"MQM weight: {label}",
                min_value=0,
                required=False,
                initial=current.get(key, defaults[key]),
                help_text=f"default {defaults[key]:g}",
            )

    def clean(self):
        cleaned = super().clean()
        defaults = scoring.DEFAULT_WEIGHTS.to_dict()
        overrides = {}
        for name, (key, _label) in _WEIGHT_FIELDS.items():
            value = cleaned.get(name)
            if value is not None and value != defaults[key]:
                overrides[key] = value
        self.instance.mqm_weights = overrides
        return cleaned

    def clean_tie_rule(self) -> str:
        return self.cleaned_data.get("tie_rule") or Campaign.TieRule.NO_MAJORITY

    def _clean_assignment(self, name: str):
        value = self.cleaned_data.get(name)
        return _ASSIGNMENT_DEFAULTS[name] if value in (None, "") else value

    def clean_assignment_policy(self) -> str:
        return self._clean_assignment("assignment_policy")

    def clean_assignment_goal(self) -> str:
        return self._clean_assignment("assignment_goal")

    def clean_assignment_alpha(self) -> float:
        return self._clean_assignment("assignment_alpha")

    def clean_assignment_tolerance(self) -> float:
        return self._clean_assignment("assignment_tolerance")

    def _language_codes(self, name: str) -> list[str]:
        codes = languages.split_codes(self.cleaned_data.get(name) or "")
        try:
            return languages.clean_language_codes(codes)
        except ValueError as exc:
            raise forms.ValidationError(str(exc)) from exc

    def clean_required_native_languages(self) -> list[str]:
        return self._language_codes("required_native_languages")

    def clean_required_working_languages(self) -> list[str]:
        return self._language_codes("required_working_languages")

    def clean_confidence_labels(self) -> list[str]:
        text = self.cleaned_data.get("confidence_labels") or ""
        labels = [line.strip() for line in text.splitlines() if line.strip()]
        try:
            protocols.choice.confidence_scale(labels)
        except ValueError as exc:
            raise forms.ValidationError(str(exc)) from exc
        return labels


class CampaignCreateForm(CampaignForm):
    items_file = UploadField(
        label="Items file",
        help_text="JSONL (one JSON object per line: doc_id, seg_id, src_lang, tgt_lang, source, "
        "target, system, kind, expected, question, choices, questions, prefill_spans, origin, "
        "origin_ref, meta), an Appraise batches file, a Google MQM TSV or a Pearmut campaign file.",
    )
    file_format = forms.ChoiceField(
        label="File format",
        choices=[(f.name, f"{f.name}: {f.label}") for f in formats.FORMATS.values()],
        initial="auto",
        required=False,
        help_text="Auto recognises the format; a wrong choice is refused with the right one named.",
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Forms (and scripts posting them) written before the setting existed leave it out.
        self.fields["text_format"].required = False

    def clean_text_format(self) -> str:
        return self.cleaned_data.get("text_format") or Campaign.TextFormat.PLAIN

    class Meta(CampaignForm.Meta):
        # Chosen once: the items' text is read by it on import (and stays so), ADR 0033.
        fields = [*CampaignForm.Meta.fields, "text_format"]
        labels = {**CampaignForm.Meta.labels, "text_format": "Item text is"}
        help_texts = {
            **CampaignForm.Meta.help_texts,
            "text_format": "HTML: source and target may hold <b>, <i>, <u>, <sub>, <sup>, "
            "<br>, <span class>…; other markup is removed and spans count the visible text.",
        }


class ItemsUploadForm(forms.Form):
    items_file = UploadField(label="More items (JSONL)")


class GenerateChecksForm(forms.Form):
    count = forms.IntegerField(min_value=1, max_value=500, initial=5)
    seed = forms.IntegerField(required=False, help_text="Empty: a random seed (stored in meta).")


def _languages(value: str) -> list[str]:
    return [part.strip() for part in value.replace(";", ",").split(",") if part.strip()]


class LanguageFields(forms.Form):
    """The languages an annotator declares; checked against a campaign's requirement by
    ``services.admit``."""

    native_language = forms.CharField(
        max_length=64, help_text="A language code, e.g. de, fa, pt-BR (or a name, e.g. German)"
    )
    working_languages = forms.CharField(
        max_length=300, help_text="Comma-separated, e.g. en, fr (or names: English, French)"
    )

    def clean_working_languages(self):
        named = _languages(self.cleaned_data["working_languages"])
        if not named:
            raise forms.ValidationError("Name at least one language.")
        if any(len(language) > 64 for language in named):
            raise forms.ValidationError("Each language must be at most 64 characters.")
        return named


def ask_for_codes(form: forms.Form) -> None:
    """Where a campaign requires languages, only codes can be checked: say so by the fields."""
    hints = {
        "native_language": "A language code, e.g. de, fa, pt-BR; two if you have two native "
        "languages: hi, en.",
        "working_languages": "Language codes, comma-separated, e.g. en, fr.",
    }
    for name, hint in hints.items():
        if name in form.fields:
            form.fields[name].help_text = hint


class JoinConfirmForm(forms.Form):
    """A logged-in annotator with a profile joins with one click: nothing to fill in."""


class ProfileFields(LanguageFields):
    consent = forms.BooleanField(
        label="I agree to take part and that my answers are stored and published under a "
        "pseudonym (never my name or email).",
    )


# The error code of a taken name, which sign-up throttles (annotation/signup_limits.py).
NAME_TAKEN = "name_taken"


class SignUpForm(ProfileFields):
    username = forms.CharField(
        label="Name or pseudonym",
        max_length=150,
        validators=[UnicodeUsernameValidator()],
        help_text="You log in with it. Letters, digits and @.+-_ only. Never shown in exports.",
    )
    email = forms.EmailField(required=False, help_text="Optional, to reach you about payment.")
    password = forms.CharField(widget=forms.PasswordInput, strip=False)

    field_order = ["username", "email", "password", "native_language", "working_languages",
                   "consent"]  # fmt: skip

    def clean_username(self):
        username = self.cleaned_data["username"]
        if get_user_model().objects.filter(username__iexact=username).exists():
            raise forms.ValidationError("That name is taken; choose another.", code=NAME_TAKEN)
        return username

    def clean(self):
        cleaned = super().clean()
        password = cleaned.get("password")
        if password:
            user = get_user_model()(username=cleaned.get("username", ""))
            try:
                password_validation.validate_password(password, user)
            except forms.ValidationError as exc:
                self.add_error("password", exc)
        return cleaned


class JoinForm(ProfileFields):
    """A logged-in user or a Prolific participant joining a campaign."""
