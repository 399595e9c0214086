"""Settings of the test suite: the platform's own (``config.settings``, driven by the same
environment), with two changes that only tests want.

Processes that a test starts (Celery workers, ``manage.py`` commands, servers) inherit
DJANGO_SETTINGS_MODULE and so these settings too.
"""

from __future__ import annotations

import os

from django.conf import global_settings

from config.settings import *  # noqa: F403
from config.settings import CELERY_BROKER_TRANSPORT_OPTIONS

# The production hashers spend about 0.3 s of CPU on each password on purpose: with a user or
# two in most tests, that was over half of the suite's CPU. MD5 here, as Django's testing docs
# advise; the tests about hashing itself (password policy, login lockout) put the real hashers
# back with the ``real_password_hashers`` fixture.
PRODUCTION_PASSWORD_HASHERS = global_settings.PASSWORD_HASHERS
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

# Under pytest-xdist each worker process has its own Redis key prefix, so that one worker's
# Celery workers never take the tasks another worker's test queued. A worker process that a
# test starts inherits PYTEST_XDIST_WORKER and so computes the same prefix.
_XDIST_WORKER = os.environ.get("PYTEST_XDIST_WORKER")
if _XDIST_WORKER and "global_keyprefix" in CELERY_BROKER_TRANSPORT_OPTIONS:
    CELERY_BROKER_TRANSPORT_OPTIONS["global_keyprefix"] += f"{_XDIST_WORKER}-"
