"""One size limit for every uploaded file, in forms and in the API (``UPLOAD_MAX_MB``).

Django already bounds what it holds in memory (``DATA_UPLOAD_MAX_MEMORY_SIZE`` for form fields,
``FILE_UPLOAD_MAX_MEMORY_SIZE`` before spooling to disk) but not the size of a file field; an
importer reads the whole file, so an unbounded upload is unbounded work. Bigger files go through
the management commands, which read from disk.
"""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError


def validate_upload_size(upload) -> None:
    """A form or serializer validator: refuse a file over ``settings.UPLOAD_MAX_BYTES``."""
    limit = settings.UPLOAD_MAX_BYTES
    if upload is not None and upload.size > limit:
        raise ValidationError(
            f"The file is larger than {limit // 2**20} MB; use the management command for "
            "big files.",
            code="file_too_large",
        )
