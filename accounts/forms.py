from __future__ import annotations

from django import forms


class TokenForm(forms.Form):
    name = forms.CharField(max_length=100, help_text="What the token is for, e.g. 'export script'.")
    read_only = forms.BooleanField(
        required=False, help_text="Only reads (GET, HEAD, OPTIONS); every write is refused."
    )
    expires_in_days = forms.IntegerField(
        required=False, min_value=1, max_value=3650, help_text="Empty: never expires."
    )
