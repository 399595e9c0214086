from django.contrib import admin

from challenge_sets.models import AuditEntry, ChallengeItem, ChallengeSet, FrozenVersion


@admin.register(ChallengeSet)
class ChallengeSetAdmin(admin.ModelAdmin):
    list_display = ("name", "licence", "campaign", "created_at")
    search_fields = ("name",)


@admin.register(ChallengeItem)
class ChallengeItemAdmin(admin.ModelAdmin):
    list_display = ("id", "challenge_set", "origin", "src_lang", "tgt_lang", "status")
    list_filter = ("status", "origin")
    raw_id_fields = ("challenge_set", "duplicate_of")


@admin.register(AuditEntry)
class AuditEntryAdmin(admin.ModelAdmin):
    list_display = ("created_at", "challenge_set", "item", "user", "action", "to_status")

    def has_change_permission(self, request, obj=None):
        return False  # the log is written by services only


@admin.register(FrozenVersion)
class FrozenVersionAdmin(admin.ModelAdmin):
    list_display = ("challenge_set", "number", "n_items", "checksum", "created_at")

    def has_change_permission(self, request, obj=None):
        return False  # frozen means frozen
