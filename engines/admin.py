from django.contrib import admin

from core.admin import ReadOnlyAdmin
from engines.forms import EngineForm
from engines.models import CachedResponse, Engine, EngineCall, ReplayEntry


@admin.register(Engine)
class EngineAdmin(admin.ModelAdmin):
    form = EngineForm
    list_display = ["name", "kind", "model", "max_concurrency", "enabled", "updated_at"]
    list_filter = ["kind", "enabled"]
    search_fields = ["name", "model", "description"]


# Ledger and cache are written only by the call path.
@admin.register(EngineCall)
class EngineCallAdmin(ReadOnlyAdmin):
    list_display = ["created_at", "engine", "scope", "operation", "items", "cost", "cache_hit"]
    list_filter = ["operation", "cache_hit", "engine"]
    search_fields = ["scope", "error"]


@admin.register(CachedResponse)
class CachedResponseAdmin(ReadOnlyAdmin):
    list_display = ["created_at", "kind", "model", "operation", "prompt_version"]
    list_filter = ["kind", "operation", "prompt_version"]
    search_fields = ["key", "model"]


@admin.register(ReplayEntry)
class ReplayEntryAdmin(ReadOnlyAdmin):
    list_display = ["engine", "src_lang", "tgt_lang", "system", "score"]
    list_filter = ["engine", "src_lang", "tgt_lang"]
    search_fields = ["source", "system"]
