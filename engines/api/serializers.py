from rest_framework import serializers

from engines.kinds import CAPABILITIES
from engines.models import Engine
from engines.services import EXPORT_FIELDS


class EngineSerializer(serializers.ModelSerializer):
    """An engine as configuration; ``api_key_env`` is a variable *name*, no key exists here."""

    capabilities = serializers.ListField(child=serializers.ChoiceField(choices=CAPABILITIES))
    params = serializers.DictField(required=False)
    url = serializers.HyperlinkedIdentityField(
        view_name="engine-detail", lookup_field="name", read_only=True
    )

    class Meta:
        model = Engine
        fields = ["url", *EXPORT_FIELDS, "created_at", "updated_at"]
        read_only_fields = ["created_at", "updated_at"]
        # Model validation runs in the service (Engine.full_clean), like the form and importer.
        validators: list = []


class EngineTotalsSerializer(serializers.Serializer):
    calls = serializers.IntegerField()
    requests = serializers.IntegerField()
    cache_hits = serializers.IntegerField()
    # A field named "errors": the metaclass pops declared fields, .errors stays the property.
    errors = serializers.IntegerField()  # type: ignore[assignment]
    tokens_in = serializers.IntegerField()
    tokens_out = serializers.IntegerField()
    cost = serializers.DecimalField(max_digits=20, decimal_places=8)


class EngineCheckSerializer(serializers.Serializer):
    ok = serializers.BooleanField()
    operation = serializers.CharField()
    sample = serializers.CharField()
    output = serializers.CharField()
    latency_ms = serializers.FloatField()
    error = serializers.CharField()
    permanent = serializers.BooleanField()
