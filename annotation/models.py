"""Annotation models: annotators, campaigns, items, claims (assignments) and annotations.

Offsets in every span (``Item.prefill_spans``, ``Annotation.answer["spans"]``) are character
offsets into ``Item.target`` counted as Python ``str`` indices, i.e. Unicode code points, with
``end`` exclusive. The browser works on grapheme clusters and converts to code points before it
saves, so a span never splits a combining sequence, an emoji or a CJK/RTL character; see
``annotation/protocols/`` for the answer shapes and their validation.
"""

from __future__ import annotations

import contextlib
import secrets
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.text import slugify

from annotation import assignment, html_text, languages, protocols, scoring
from core.validators import validate_json_object


def new_pseudonym() -> str:
    """A stable random name; the only identity of an annotator that ever leaves the platform."""
    return f"ann-{secrets.token_hex(5)}"


def new_invite_token() -> str:
    return secrets.token_urlsafe(12)


def _validate_language_list(value: Any) -> None:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise ValidationError("working languages must be a list of non-empty strings")


def _validate_language_codes(value: Any) -> None:
    try:
        languages.clean_language_codes(value)
    except ValueError as exc:
        raise ValidationError(str(exc)) from exc


# Migration 0001 names the validator by this older path.
_validate_json_object = validate_json_object


def _validate_mqm_weights(value: Any) -> None:
    try:
        scoring.MqmWeights.from_dict(value)
    except (ValueError, TypeError, AttributeError) as exc:
        raise ValidationError(f"MQM weights: {exc}") from exc


def _validate_choices(value: Any) -> None:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ValidationError("choices must be a list of non-empty strings")


def _validate_confidence_labels(value: Any) -> None:
    try:
        protocols.choice.confidence_scale(value)
    except ValueError as exc:
        raise ValidationError(str(exc)) from exc


def new_item_order_seed() -> int:
    """The campaign's seed of per-annotator item orders (31 bits: an integer column anywhere)."""
    return secrets.randbelow(2**31)


def _validate_protocol(value: Any) -> None:
    if not protocols.is_registered(value):
        raise ValidationError(
            f"unknown protocol {value!r}; registered protocols: {', '.join(protocols.names())}"
        )


def _validate_assignment_policy(value: Any) -> None:
    if not assignment.is_known(value):
        raise ValidationError(str(assignment.UnknownPolicy(value)))


class Annotator(models.Model):
    """The annotation profile of a user; one per user, shared by all campaigns."""

    class Source(models.TextChoices):
        INVITE = "invite", "Invitation"
        OPEN = "open", "Open sign-up"
        PROLIFIC = "prolific", "Prolific"

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="annotator"
    )
    pseudonym = models.CharField(max_length=32, unique=True, default=new_pseudonym, editable=False)
    display_name = models.CharField(max_length=150, blank=True)
    native_language = models.CharField(max_length=64, blank=True)
    working_languages = models.JSONField(
        default=list, blank=True, validators=[_validate_language_list]
    )
    source = models.CharField(max_length=16, choices=Source.choices, default=Source.OPEN)
    prolific_pid = models.CharField(max_length=64, blank=True)
    study_id = models.CharField(max_length=64, blank=True)
    session_id = models.CharField(max_length=64, blank=True)
    consent_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["pseudonym"]
        constraints = [
            # Prolific sign-in looks the annotator up by PROLIFIC_PID: one profile per PID.
            models.UniqueConstraint(
                fields=["prolific_pid"],
                condition=~Q(prolific_pid=""),
                name="annotation_annotator_unique_prolific_pid",
            ),
        ]

    def __str__(self) -> str:
        return self.pseudonym


class Campaign(models.Model):
    """A set of items judged with one protocol, with its sign-up, QC and scoring settings."""

    class Status(models.TextChoices):
        OPEN = "open", "Open"
        PAUSED = "paused", "Paused"
        CLOSED = "closed", "Closed"

    name = models.CharField(max_length=200, unique=True)
    slug = models.SlugField(max_length=80, unique=True, editable=False)
    # A name in the protocol registry (annotation/protocols/), checked on the way in rather
    # than with static choices, so that registering a protocol needs no migration.
    protocol = models.CharField(
        max_length=protocols.NAME_MAX_LENGTH, validators=[_validate_protocol]
    )
    src_lang = models.CharField(max_length=16, blank=True)
    tgt_lang = models.CharField(max_length=16, blank=True)
    instructions = models.TextField(blank=True)
    overlap = models.PositiveSmallIntegerField(
        default=1, validators=[MinValueValidator(1), MaxValueValidator(100)]
    )
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.OPEN)

    # Sign-up.
    signup_open = models.BooleanField(default=True)
    invite_token = models.CharField(max_length=64, blank=True)
    require_approval = models.BooleanField(default=False)
    require_qualification = models.BooleanField(default=False)
    qualification_min_accuracy = models.FloatField(
        default=0.8, validators=[MinValueValidator(0.0), MaxValueValidator(1.0)]
    )
    max_items_per_annotator = models.PositiveIntegerField(null=True, blank=True)
    # Who may join, by declared language (annotation/languages.py): codes such as "fa" or
    # "pt-BR"; [] lets anyone in. Native: any one of them; working: all of them.
    required_native_languages = models.JSONField(
        default=list, blank=True, validators=[_validate_language_codes]
    )
    required_working_languages = models.JSONField(
        default=list, blank=True, validators=[_validate_language_codes]
    )
    # Campaigns sharing a non-empty group exclude each other: someone enrolled in one of them
    # cannot join another (two studies of one language must have different annotators).
    exclusive_group = models.SlugField(max_length=50, blank=True)

    # Prolific: the completion URL gets ``?cc=<code>``; the code depends on the QC verdict.
    prolific_completion_url = models.URLField(
        blank=True, default="https://app.prolific.com/submissions/complete"
    )
    prolific_pass_code = models.CharField(max_length=64, blank=True)
    prolific_fail_code = models.CharField(max_length=64, blank=True)

    # Quality control (see annotation/qc.py).
    qc_min_pass_rate = models.FloatField(
        default=0.8, validators=[MinValueValidator(0.0), MaxValueValidator(1.0)]
    )
    qc_min_checks = models.PositiveSmallIntegerField(default=1)
    qc_min_seconds_per_item = models.FloatField(default=3.0, validators=[MinValueValidator(0.0)])
    qc_max_fast_fraction = models.FloatField(
        default=0.5, validators=[MinValueValidator(0.0), MaxValueValidator(1.0)]
    )

    # MQM: overrides of annotation.scoring.MqmWeights (keys minor, major, critical,
    # minor_punctuation, non_translation); {} means the Freitag et al. (2021) defaults.
    mqm_weights = models.JSONField(default=dict, blank=True, validators=[_validate_mqm_weights])
    mqm_allow_critical = models.BooleanField(default=False)

    # Choice protocol.
    multi_select = models.BooleanField(default=False)
    ask_confidence = models.BooleanField(default=True)
    # The confidence scale's labels, least to most confident; the answer is the label's
    # 1-based rank. [] is the default 1–5 scale (1 guess … 5 certain).
    confidence_labels = models.JSONField(
        default=list, blank=True, validators=[_validate_confidence_labels]
    )

    class TieRule(models.TextChoices):
        NO_MAJORITY = "no_majority", "No majority (the item is a tie)"
        ATTESTED_WINS = "attested_wins", "The attested option wins a tie it is part of"

    # How a choice item's majority vote treats a tie (annotation.agreement.majority_vote);
    # the attested option is the item's meta["attested"].
    tie_rule = models.CharField(max_length=16, choices=TieRule.choices, default=TieRule.NO_MAJORITY)

    # Per-annotator item order: off, every annotator sees items by position; on, each sees
    # them in a permutation drawn from (item_order_seed, annotator), see annotation/ordering.py.
    shuffle_items = models.BooleanField(default=False)
    item_order_seed = models.PositiveIntegerField(default=new_item_order_seed)

    class TextFormat(models.TextChoices):
        PLAIN = html_text.PLAIN, "Plain text"
        HTML = html_text.HTML, "HTML (sanitised; spans count the visible text)"

    # How item text is read on import and shown (ADR 0033): html items keep their sanitised
    # markup in meta["html"] and their visible text in source/target, which spans index.
    text_format = models.CharField(
        max_length=8, choices=TextFormat.choices, default=TextFormat.PLAIN
    )

    claim_ttl_seconds = models.PositiveIntegerField(
        default=1800, validators=[MinValueValidator(60)]
    )

    # Which open item next-item hands out (annotation/assignment.py, ADR 0051): "ordered" is
    # the annotator's own order, as always; a registered policy (ranking's uniform, pearmut,
    # settle) picks the (system, segment) cell that settles the goal most, among the same
    # open items, and the campaign closes itself once the goal is settled at the alpha.
    class Goal(models.TextChoices):
        TOP = "top", assignment.GOALS["top"]
        ADJACENT = "adjacent", assignment.GOALS["adjacent"]
        FULL = "full", assignment.GOALS["full"]

    assignment_policy = models.CharField(
        max_length=assignment.NAME_MAX_LENGTH,
        default=assignment.DEFAULT,
        validators=[_validate_assignment_policy],
    )
    assignment_goal = models.CharField(max_length=10, choices=Goal.choices, default=Goal.TOP)
    assignment_alpha = models.FloatField(
        default=0.05, validators=[MinValueValidator(0.001), MaxValueValidator(0.5)]
    )
    assignment_tolerance = models.FloatField(default=0.0, validators=[MinValueValidator(0.0)])
    # The key of Item.meta holding an automatic score of the item (QE or a metric, 0-100),
    # imported with the items; "" for none. It orders the cold start and tilts which segments
    # a pair is judged on; no decision rests on it.
    assignment_prior = models.CharField(max_length=64, blank=True)
    # What the goal checks found (services/adaptive.py): the ranking, the checks' history,
    # the annotators whose judgments no longer count, the stop. Written by the service only.
    assignment_state = models.JSONField(default=dict, blank=True, editable=False)

    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(overlap__gte=1), name="annotation_campaign_overlap_gte_1"
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def save(self, *args, **kwargs):
        if not self.slug:
            base = slugify(self.name)[:60] or "campaign"
            self.slug = f"{base}-{secrets.token_hex(4)}"
        super().save(*args, **kwargs)

    def clean(self) -> None:
        self._standardize_languages()
        self._check_protocol_switch()

    def _standardize_languages(self) -> None:
        # Stored in standard form (PT-br → pt-BR) so pages and exports show one spelling;
        # a bad code was already reported by the field validator.
        for name in ("required_native_languages", "required_working_languages"):
            with contextlib.suppress(ValueError):
                setattr(self, name, languages.clean_language_codes(getattr(self, name)))

    def _check_protocol_switch(self) -> None:
        # Answers (drafts too) were validated and scored by the old protocol's rules: under
        # another protocol they would no longer mean anything, so the switch is refused.
        if self.pk is None:
            return
        saved = Campaign.objects.filter(pk=self.pk).values_list("protocol", flat=True).first()
        if saved not in (None, self.protocol) and self.annotations.exists():
            raise ValidationError(
                {
                    "protocol": f"The protocol cannot be changed from {saved} once annotators "
                    "have started: this campaign already has annotations. Create a new "
                    "campaign for the other protocol."
                }
            )

    @property
    def is_open(self) -> bool:
        return self.status == self.Status.OPEN

    @property
    def signup_closed(self) -> bool:
        """New annotators cannot join: sign-up switched off, or the campaign closed."""
        return not self.signup_open or self.status == self.Status.CLOSED

    @property
    def has_language_requirement(self) -> bool:
        return bool(self.required_native_languages or self.required_working_languages)

    @property
    def language_requirement(self) -> str:
        """The language requirement in words (``""`` when anyone may join)."""
        return languages.describe(self.required_native_languages, self.required_working_languages)

    @property
    def is_adaptive(self) -> bool:
        """A registered policy, not the default order, picks the next items."""
        return self.assignment_policy != assignment.DEFAULT

    @property
    def assignment_policy_label(self) -> str:
        """The policy's label for pages; the bare name if it is no longer registered."""
        return dict(assignment.choices()).get(self.assignment_policy, self.assignment_policy)

    def get_protocol(self) -> protocols.Protocol:
        """The registered protocol this campaign's items are judged with."""
        return protocols.get(self.protocol)

    @property
    def protocol_label(self) -> str:
        """The protocol's label for pages; the bare name if it is no longer registered."""
        if protocols.is_registered(self.protocol):
            return self.get_protocol().label
        return self.protocol

    def weights(self) -> scoring.MqmWeights:
        """The campaign's MQM weights, for ``scoring.mqm_score(spans, campaign.weights())``.

        Built once per instance and settings: exports call this once per annotation.
        """
        cached = self.__dict__.get("_weights")
        if cached is None or cached[0] != self.mqm_weights:
            cached = (dict(self.mqm_weights), scoring.MqmWeights.from_dict(self.mqm_weights))
            self.__dict__["_weights"] = cached
        return cached[1]

    def severities(self) -> list[str]:
        return self.get_protocol().severities(self)


class Enrollment(models.Model):
    """One annotator's membership of one campaign."""

    class Status(models.TextChoices):
        PENDING = "pending", "Pending approval"
        APPROVED = "approved", "Approved"
        PAUSED = "paused", "Paused"
        REJECTED = "rejected", "Rejected"

    # No index of its own: the unique (campaign, annotator) constraint's index starts with this
    # column, and every write would maintain both.
    campaign = models.ForeignKey(
        Campaign, on_delete=models.CASCADE, related_name="enrollments", db_index=False
    )
    annotator = models.ForeignKey(Annotator, on_delete=models.CASCADE, related_name="enrollments")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.APPROVED)
    qualified = models.BooleanField(default=False)
    # Set when the annotator has no item left (or reached max_items_per_annotator).
    finished_at = models.DateTimeField(null=True, blank=True)
    # The seed of this annotator's item permutation (campaign.shuffle_items), derived from
    # (campaign.item_order_seed, annotator) when first needed and kept, so the order can be
    # rebuilt and exported even if the campaign seed changes later.
    item_order_seed = models.BigIntegerField(null=True, blank=True)
    # Prolific's SESSION_ID from the link this annotator first entered this campaign by: only
    # that link (or their own signed-in browser) resumes them here, not their PROLIFIC_PID alone.
    prolific_session_id = models.CharField(max_length=64, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["campaign_id", "created_at"]
        constraints = [
            # Sign-up and every annotator page look up (campaign, annotator): one row per pair.
            models.UniqueConstraint(
                fields=["campaign", "annotator"], name="annotation_enrollment_unique"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.annotator} in {self.campaign}"

    @property
    def can_annotate(self) -> bool:
        return self.status == self.Status.APPROVED


class Item(models.Model):
    """One thing to judge: a segment (ESA/MQM) or a question with options (choice)."""

    class Kind(models.TextChoices):
        REGULAR = "regular", "Regular"
        ATTENTION_CHECK = "attention_check", "Attention check"
        TUTORIAL = "tutorial", "Tutorial"

    # No index of its own: annotation_item_open_idx starts with this column, and every write
    # would maintain both.
    campaign = models.ForeignKey(
        Campaign, on_delete=models.CASCADE, related_name="items", db_index=False
    )
    doc_id = models.CharField(max_length=255, blank=True)
    seg_id = models.CharField(max_length=64, blank=True)
    src_lang = models.CharField(max_length=16, blank=True)
    tgt_lang = models.CharField(max_length=16, blank=True)
    source = models.TextField()
    target = models.TextField(blank=True)
    system = models.CharField(max_length=200, blank=True)
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.REGULAR)
    expected = models.JSONField(null=True, blank=True)
    question = models.TextField(blank=True)
    choices = models.JSONField(default=list, blank=True, validators=[_validate_choices])
    # Questionnaire items: [{"id", "family", "prompt", "type", "options"?, ...}], validated by
    # annotation/protocols/questionnaire.py on import.
    questions = models.JSONField(default=list, blank=True)
    prefill_spans = models.JSONField(default=list, blank=True)
    origin = models.CharField(max_length=100, blank=True)
    origin_ref = models.CharField(max_length=255, blank=True)
    meta = models.JSONField(default=dict, blank=True, validators=[validate_json_object])
    position = models.PositiveIntegerField(default=0)
    completed_count = models.PositiveIntegerField(default=0)
    # Claims that hold a slot: active (not yet released) + submitted assignments. Kept with F()
    # updates under the item's row lock so that next_item_for finds an open item in one indexed
    # query instead of recounting every candidate's claims (ADR 0007).
    live_slots = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["campaign_id", "position", "id"]
        indexes = [
            # next_item_for: items of a campaign with a free slot, in position order.
            models.Index(
                fields=["campaign", "kind", "live_slots", "position"],
                name="annotation_item_open_idx",
            ),
            # Document context: neighbouring segments of the same document.
            models.Index(fields=["campaign", "doc_id", "position"], name="annotation_item_doc_idx"),
            # Other apps find their items back by origin reference.
            models.Index(fields=["origin", "origin_ref"], name="annotation_item_origin_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.campaign_id}:{self.doc_id}#{self.seg_id}"

    @property
    def is_per_annotator(self) -> bool:
        """Checks and tutorials are shown to every annotator; overlap does not limit them."""
        return self.kind != self.Kind.REGULAR

    @property
    def source_html(self) -> str | None:
        return self.html_of("source")

    @property
    def target_html(self) -> str | None:
        return self.html_of("target")

    def html_of(self, side: str) -> str | None:
        """The sanitised HTML of ``side`` (``source`` or ``target``) in an ``html`` campaign,
        sanitised again on the way out (the row may have been edited since the import); None
        where the item is plain text (a plain campaign, a generated check, no markup kept)."""
        if self.campaign.text_format != Campaign.TextFormat.HTML:
            return None
        kept = self.meta.get("html") if isinstance(self.meta, dict) else None
        value = kept.get(side) if isinstance(kept, dict) else None
        if not isinstance(value, str):
            return None
        sanitized = html_text.sanitize(value)
        # Spans index the stored visible text: markup that no longer matches it is not shown.
        visible = self.source if side == "source" else self.target
        return sanitized if html_text.visible_text(sanitized) == visible else None

    def clean(self) -> None:
        try:
            protocols.normalize_item(self.campaign.protocol, self.as_dict())
        except protocols.ItemError as exc:
            raise ValidationError(str(exc)) from exc

    def as_dict(self) -> dict[str, Any]:
        return {
            "doc_id": self.doc_id,
            "seg_id": self.seg_id,
            "src_lang": self.src_lang,
            "tgt_lang": self.tgt_lang,
            "source": self.source,
            "target": self.target,
            "system": self.system,
            "kind": self.kind,
            "expected": self.expected,
            "question": self.question,
            "choices": self.choices,
            "questions": self.questions,
            "prefill_spans": self.prefill_spans,
            "origin": self.origin,
            "origin_ref": self.origin_ref,
            "meta": self.meta,
        }


class Assignment(models.Model):
    """A claim of one item slot by one annotator; expires unless renewed by activity."""

    class Status(models.TextChoices):
        ACTIVE = "active", "Active"
        SUBMITTED = "submitted", "Submitted"
        EXPIRED = "expired", "Expired"

    # No index of their own: annotation_asg_mine_idx and annotation_asg_slots_idx start with
    # these columns, and every claim would maintain both.
    campaign = models.ForeignKey(
        Campaign, on_delete=models.CASCADE, related_name="assignments", db_index=False
    )
    item = models.ForeignKey(
        Item, on_delete=models.CASCADE, related_name="assignments", db_index=False
    )
    annotator = models.ForeignKey(Annotator, on_delete=models.CASCADE, related_name="assignments")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.ACTIVE)
    claimed_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["claimed_at", "id"]
        constraints = [
            # next_item_for never gives an annotator the same item twice.
            models.UniqueConstraint(
                fields=["item", "annotator"], name="annotation_assignment_unique"
            ),
        ]
        indexes = [
            # Recounting an item's live slots under its lock.
            models.Index(fields=["item", "status", "expires_at"], name="annotation_asg_slots_idx"),
            # next_item_for releases a campaign's lapsed claims when no item is open.
            models.Index(
                fields=["campaign", "status", "expires_at"], name="annotation_asg_lapsed_idx"
            ),
            # "My tasks" progress and resuming an open claim: one annotator in one campaign.
            models.Index(
                fields=["campaign", "annotator", "status"], name="annotation_asg_mine_idx"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.annotator} → item {self.item_id} ({self.status})"

    def is_live(self, now=None) -> bool:
        now = now or timezone.now()
        return self.status == self.Status.SUBMITTED or (
            self.status == self.Status.ACTIVE and self.expires_at > now
        )


class Annotation(models.Model):
    """One annotator's work on one item: the autosaved draft and the submitted answer.

    ``draft`` is the working copy the page autosaves; ``answer`` is what was last submitted
    (``{}`` while ``status`` is ``draft``). ``score`` is on a 0–100 scale, higher is better, for
    ESA (the annotator's score) and MQM (``scoring.mqm_to_100`` of ``mqm_score``); ``None`` for
    choice. ``mqm_score`` is the raw weighted error sum (0 = no error, higher = worse).
    ``option_order`` lists indices into ``item.choices`` in the order they were shown.
    """

    class Status(models.TextChoices):
        DRAFT = "draft", "Draft"
        SUBMITTED = "submitted", "Submitted"

    # No index of their own: annotation_ann_export_idx and the unique (item, annotator)
    # constraint's index start with these columns, and every submission would maintain both.
    campaign = models.ForeignKey(
        Campaign, on_delete=models.CASCADE, related_name="annotations", db_index=False
    )
    item = models.ForeignKey(
        Item, on_delete=models.CASCADE, related_name="annotations", db_index=False
    )
    annotator = models.ForeignKey(Annotator, on_delete=models.CASCADE, related_name="annotations")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.DRAFT)
    draft = models.JSONField(default=dict, blank=True, validators=[validate_json_object])
    answer = models.JSONField(default=dict, blank=True, validators=[validate_json_object])
    score = models.FloatField(null=True, blank=True)
    mqm_score = models.FloatField(null=True, blank=True)
    option_order = models.JSONField(default=list, blank=True)
    time_spent_seconds = models.FloatField(default=0.0)
    last_activity_at = models.DateTimeField(default=timezone.now)
    idempotency_key = models.CharField(max_length=64, blank=True)
    revision = models.PositiveIntegerField(default=0)
    submitted_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            # One annotation per (item, annotator): a double submit can only update it.
            models.UniqueConstraint(
                fields=["item", "annotator"], name="annotation_annotation_unique"
            ),
            # submit_annotation replays a retried request by (annotator, Idempotency-Key).
            models.UniqueConstraint(
                fields=["annotator", "idempotency_key"],
                condition=~Q(idempotency_key=""),
                name="annotation_annotation_unique_idem_key",
            ),
        ]
        indexes = [
            # Exports and the dashboard stream a campaign's submitted annotations.
            models.Index(fields=["campaign", "status", "id"], name="annotation_ann_export_idx"),
            # QC and progress per annotator in a campaign.
            models.Index(
                fields=["campaign", "annotator", "status"], name="annotation_ann_mine_idx"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.annotator} on item {self.item_id} ({self.status})"

    @property
    def is_submitted(self) -> bool:
        return self.status == self.Status.SUBMITTED
