"""Hardset settings: one module, driven by the environment (see the README's table).

Defaults give the embedded setup: an SQLite file and a filesystem Celery broker under ``var/``,
so ``make run`` needs no server. Production sets DATABASE_URL, CELERY_BROKER_URL and SECRET_KEY.
"""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path
from typing import Any

import dj_database_url
from csp.constants import NONE, SELF
from django.core.exceptions import ImproperlyConfigured

from core.env import env_bool, env_int, env_list, env_proxy_ssl_header, env_str

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(env_str("HARDSET_VAR_DIR", str(BASE_DIR / "var")))
# The real WMT data the demo reads in place (never copied): ../shared/data beside the checkout.
SHARED_DATA_DIR = Path(env_str("HARDSET_SHARED_DATA", str(BASE_DIR.parent / "shared" / "data")))
# The embedded database, broker folders and beat schedule live here; SQLite cannot create the
# folder of its file, so a fresh HARDSET_VAR_DIR is made on start.
VAR_DIR.mkdir(parents=True, exist_ok=True)

DEV_SECRET_KEY = "django-insecure-hardset-development-key-do-not-deploy"

DEBUG = env_bool("DEBUG", False)
SECRET_KEY = env_str("SECRET_KEY", DEV_SECRET_KEY)
if not DEBUG and SECRET_KEY == DEV_SECRET_KEY:
    raise ImproperlyConfigured(
        "SECRET_KEY is the development key but DEBUG is off. Set SECRET_KEY (or SECRET_KEY_FILE) "
        "to a long random value, or set DEBUG=true for local development."
    )

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost"] if DEBUG else [])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])
SITE_URL = env_str("SITE_URL", "http://127.0.0.1:8000").rstrip("/")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_htmx",
    "template_partials",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "axes",
    "csp",
    "core.apps.PlatformConfig",
    "accounts",
    "imports",
    "engines",
    "annotation",
    "difficulty",
    "search",
    "lexical",
    "challenge_sets",
    "ranking",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "core.api_errors.ApiNotFoundMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    # Before the CSRF check, which is where Django reads a form and refuses one too large.
    "core.uploads.PageBodyTooLargeMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "core.csp.CSPMiddleware",  # django-csp's, the header built once
    "django_htmx.middleware.HtmxMiddleware",
    # Last, as django-axes requires: it turns a locked-out login into a 429 page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "core.navigation.navigation",
            ],
            "builtins": ["template_partials.templatetags.partials"],
        },
    }
]

# --- Database -------------------------------------------------------------------------------
DATABASE_URL = env_str("DATABASE_URL", f"sqlite:///{VAR_DIR / 'hardset.sqlite3'}")
try:
    # Health checks: a kept connection is tested before its first use in each request or task,
    # so a database server that restarted costs one reconnection, not a failed request.
    DATABASES = {
        "default": dj_database_url.parse(DATABASE_URL, conn_max_age=60, conn_health_checks=True)
    }
except ValueError as exc:
    raise ImproperlyConfigured(f"DATABASE_URL is not a usable database URL: {exc}") from exc
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # Django's backend, with prepared statements on the hot path and a health check that
    # costs no round trip while the connection is fine (core/postgresql/base.py).
    DATABASES["default"]["ENGINE"] = "core.postgresql"
    # psycopg prepares a statement of that cursor the fifth time a connection runs it. Off
    # behind a connection pooler that cannot keep prepared statements (PgBouncer < 1.21 in
    # transaction mode).
    if env_bool("DATABASE_PREPARED_STATEMENTS", True):
        DATABASES["default"].setdefault("OPTIONS", {}).setdefault("prepare_threshold", 5)
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    # WAL lets the web server read while the worker writes; IMMEDIATE avoids lock upgrades
    # that fail with "database is locked" when two processes write at once.
    DATABASES["default"]["OPTIONS"] = {
        "timeout": 30,
        "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
    # A file, not :memory:, so that a worker process started by a test sees the test database.
    # The process id keeps concurrent test runs on one checkout apart.
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / f"test-hardset-{os.getpid()}.sqlite3")}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Cache ----------------------------------------------------------------------------------
# The throttles (API rates, sign-up attempts) count in the default cache, so it must be one that
# every web process shares: a per-process cache lets each gunicorn worker grant the whole limit.
# Redis when CACHE_URL names one (production); otherwise Django's database cache, shared by
# whatever shares the database (`make run`'s processes, several servers on one PostgreSQL).
# Its table is made by `migrate` (core/apps.py).
CACHE_URL = env_str("CACHE_URL", "")
if CACHE_URL:
    if not CACHE_URL.startswith(("redis://", "rediss://", "unix://")):
        raise ImproperlyConfigured(
            f"CACHE_URL={CACHE_URL!r} is not a Redis URL (redis://, rediss:// or unix://)."
        )
    _SHARED_CACHE: dict[str, Any] = {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": CACHE_URL,
        "KEY_PREFIX": env_str("CACHE_KEY_PREFIX", "hardset"),
    }
else:
    _SHARED_CACHE = {
        "BACKEND": "django.core.cache.backends.db.DatabaseCache",
        "LOCATION": "hardset_cache",
        # Past MAX_ENTRIES a write deletes a third of the rows, counts in use among them: at
        # Django's 300, clients from a few hundred addresses would reset everyone's throttles.
        "OPTIONS": {"MAX_ENTRIES": 200_000},
    }
CACHES = {
    "default": _SHARED_CACHE,
    # Values recomputed from the database (dashboard summaries, charts) under keys that change
    # with the data: any process may keep its own copy, so without Redis they stay in memory
    # rather than cost each page database queries.
    "derived": _SHARED_CACHE
    if CACHE_URL
    else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "derived"},
}

# --- Auth -----------------------------------------------------------------------------------
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# django-axes first: it refuses a locked-out (account, address) before any password is checked,
# for the login form and for API Basic auth alike (both go through authenticate()).
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    # Django's ModelBackend, reading the signed-in user with hand-written SQL.
    "accounts.backends.ModelBackend",
]
# Failures are counted per account *and* address, so nobody can lock a user out from elsewhere.
# Attempts live in the database (shared by every web process); a success resets them, and
# `python manage.py axes_reset` (or the admin) lifts a lockout.
AXES_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 5, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("LOGIN_LOCKOUT_MINUTES", 15, minimum=1))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
# Public sign-up: attempts per client address and campaign per hour (annotation/signup_limits.py).
SIGNUP_ATTEMPTS_PER_HOUR = env_int("SIGNUP_ATTEMPTS_PER_HOUR", 10, minimum=1)
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"
# Database sessions, read by hand-written SQL (accounts/sessions.py).
SESSION_ENGINE = "accounts.sessions"
SESSION_COOKIE_AGE = env_int("SESSION_COOKIE_AGE", 14 * 24 * 3600, minimum=60)
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", not DEBUG)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", not DEBUG)

# --- HTTPS ----------------------------------------------------------------------------------
# Opt-in (docs/adr/0017): a redirect to HTTPS behind a proxy that does not say the request was
# HTTPS loops forever, and browsers remember HSTS for its whole max-age, so both are turned on
# deliberately once TLS works. `manage.py check --deploy` names whatever is still off.
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", False)
# Load balancers and orchestrators probe the server directly over plain HTTP.
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", False)
# The header a TLS-terminating proxy sets to "https", e.g. X-Forwarded-Proto. Only name one
# the proxy always overwrites: a client could otherwise claim HTTPS over plain HTTP.
SECURE_PROXY_SSL_HEADER = env_proxy_ssl_header("SECURE_PROXY_SSL_HEADER")

# --- Content Security Policy (django-csp; Django 5.2 has none of its own) --------------------
# Everything comes from this origin and nothing runs or styles inline: scripts and styles are
# static files, handlers are bound in static/js/hardset.js, and htmx's indicator CSS is in
# hardset.css (its meta config stops it injecting a <style>). Swagger UI gets its init script
# from a URL of its own (SpectacularSwaggerSplitView). form-action is left out on purpose:
# Chromium applies it to the redirects after a post, and submitting the last item of a Prolific
# study redirects to Prolific's completion URL.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF],
        # Swagger UI and Pico draw small icons as data: SVGs.
        "img-src": [SELF, "data:"],
        "connect-src": [SELF],
        "font-src": [SELF],
        "object-src": [NONE],
        "base-uri": [SELF],
        "frame-ancestors": [NONE],
    }
}

# --- Internationalisation -------------------------------------------------------------------
LANGUAGE_CODE = "en-us"
TIME_ZONE = env_str("TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True

# --- Static files ---------------------------------------------------------------------------
STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
# Front-end packages come from npm at install time (package.json) and are served from here.
STATICFILES_DIRS = [
    BASE_DIR / "static",
    ("vendor/htmx", BASE_DIR / "node_modules" / "htmx.org" / "dist"),
    ("vendor/pico", BASE_DIR / "node_modules" / "@picocss" / "pico" / "css"),
]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
MEDIA_ROOT = VAR_DIR / "media"

# --- Email ----------------------------------------------------------------------------------
EMAIL_BACKEND = env_str("EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")
EMAIL_HOST = env_str("EMAIL_HOST", "localhost")
EMAIL_PORT = env_int("EMAIL_PORT", 25, minimum=1)
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", False)
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "hardset@localhost")

# --- Celery ---------------------------------------------------------------------------------
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", "filesystem://")
_BROKER_DIR = VAR_DIR / "broker"
if CELERY_BROKER_URL.startswith("filesystem://"):
    # Kombu's filesystem transport: producer and consumer share one folder, so separate
    # processes on one machine exchange messages with no server.
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_BROKER_DIR / "queue"),
        "data_folder_out": str(_BROKER_DIR / "queue"),
        "control_folder": str(_BROKER_DIR / "control"),
        "store_processed": False,
    }
    # The transport expects its folders to exist. Made here, not in a Celery on_configure
    # handler: reading the app's conf from inside that signal re-enters configuration.
    for _folder in ("queue", "control"):
        (_BROKER_DIR / _folder).mkdir(parents=True, exist_ok=True)
else:
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        # Above the hard time limit, so a long task is never handed to a second worker
        # while the first is still running it.
        "visibility_timeout": env_int("CELERY_VISIBILITY_TIMEOUT", 3600, minimum=60),
    }
    _KEYPREFIX = env_str("CELERY_BROKER_KEYPREFIX", "")
    if _KEYPREFIX:
        CELERY_BROKER_TRANSPORT_OPTIONS["global_keyprefix"] = _KEYPREFIX
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SOFT_TIME_LIMIT = env_int("CELERY_TASK_SOFT_TIME_LIMIT", 300, minimum=1)
CELERY_TASK_TIME_LIMIT = env_int("CELERY_TASK_TIME_LIMIT", 360, minimum=1)
if CELERY_TASK_TIME_LIMIT <= CELERY_TASK_SOFT_TIME_LIMIT:
    raise ImproperlyConfigured("CELERY_TASK_TIME_LIMIT must be above CELERY_TASK_SOFT_TIME_LIMIT.")
CELERY_TASK_DEFAULT_QUEUE = "default"
CELERY_SLOW_QUEUE = "slow"
# Rounds that call a local model (engines.local_models) run here: a worker of this queue keeps
# each model loaded in its processes, so it loads once per process, not per call.
CELERY_LOCAL_MODELS_QUEUE = "local_models"
# Engines of the local-model kinds are checked on save (the extra installed, the directory a
# model) in the process that saves them; off where the web servers do not hold the weights.
LOCAL_MODELS_CHECK_ON_SAVE = env_bool("LOCAL_MODELS_CHECK_ON_SAVE", True)
CELERY_TASK_ALWAYS_EAGER = False
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# A broker that restarts (or is away for long) is waited for, never given up on: the worker keeps
# reconnecting, and the sweep re-queues the rounds whose messages died with the broker.
CELERY_BROKER_CONNECTION_RETRY = True
CELERY_BROKER_CONNECTION_MAX_RETRIES = None
# A round running when the broker connection drops finishes and commits (Celery 6 would cancel
# it): its message, if the broker kept it, comes back later and is dropped as stale.
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = False
WORKER_HEARTBEAT_SECONDS = env_int("WORKER_HEARTBEAT_SECONDS", 10, minimum=1)
# A round's claim on its job (every kind: rounds.round_lease); past it another worker may take
# the round over. Past the hard time limit the round's worker is certainly gone.
# SEARCH_ROUND_LEASE_S is the name it had when only search rounds read it.
ROUND_LEASE_S = env_int(
    "ROUND_LEASE_S",
    env_int("SEARCH_ROUND_LEASE_S", CELERY_TASK_TIME_LIMIT + 30, minimum=2),
    minimum=2,
)
# Answers a lexical model-evaluation round asks for (seed 004 §4); smaller rounds report
# progress more often.
LEXICAL_EVAL_ROUND_ITEMS = env_int("LEXICAL_EVAL_ROUND_ITEMS", 200, minimum=1)
# Concepts per round of a lexical rule job (one engine call each, plus re-asks).
LEXICAL_RULES_ROUND_CONCEPTS = env_int("LEXICAL_RULES_ROUND_CONCEPTS", 4, minimum=1)
# Beat (``celery -A config beat``, embedded in ``make run``'s worker) sweeps every kind of long
# job for rounds nobody works on (a lost message, a worker gone for good) and for human
# deadlines (``rounds.sweep``).
CELERY_BEAT_SCHEDULE = {
    "rounds-sweep": {"task": "rounds.sweep", "schedule": 60.0},
}
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")

# --- Uploads --------------------------------------------------------------------------------
# The largest file any form or API import accepts (core/uploads.py); bigger files go through
# the management commands.
UPLOAD_MAX_BYTES = env_int("UPLOAD_MAX_MB", 50, minimum=1) * 2**20
# An upload above this size is imported by a worker as an ImportJob (imports/, ADR 0022); the
# request only stores the file and answers with the job's page (or a 202 in the API).
IMPORT_INLINE_MAX_BYTES = env_int("IMPORT_INLINE_MAX_MB", 2, minimum=0) * 2**20
# Releases read from an archive or a folder (formats/archives.py): the most bytes of files an
# import reads into memory, the most an archive may unpack to in all (a bomb is refused before
# it is unpacked: a tar's members are skipped by size, a zip's sizes are bounded as read), and
# the most members. mt-metrics-eval's whole release unpacks to several GB, most of it metric
# scores that are never read; name the test set to read only its files.
RELEASE_READ_MAX_BYTES = env_int("RELEASE_READ_MAX_MB", 1024, minimum=1) * 2**20
RELEASE_UNPACKED_MAX_BYTES = env_int("RELEASE_UNPACKED_MAX_MB", 16384, minimum=1) * 2**20
RELEASE_MAX_MEMBERS = env_int("RELEASE_MAX_MEMBERS", 200_000, minimum=1)

# --- REST API -------------------------------------------------------------------------------
# Basic auth sends the account password with every request; scripts should use personal API
# tokens (accounts/), so production accepts Basic only when asked to.
API_BASIC_AUTH = env_bool("API_BASIC_AUTH", DEBUG)
API_THROTTLE_ANON = env_str("API_THROTTLE_ANON", "60/minute")
API_THROTTLE_USER = env_str("API_THROTTLE_USER", "1200/minute")
# Refused bearer tokens per client address (accounts.throttles.FailedTokenThrottle).
API_THROTTLE_FAILED_TOKEN = env_str("API_THROTTLE_FAILED_TOKEN", "20/minute")
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # Session first: an anonymous request stays a 403 (no WWW-Authenticate challenge).
        "rest_framework.authentication.SessionAuthentication",
        "accounts.authentication.ApiTokenAuthentication",
        "accounts.authentication.OptionalBasicAuthentication",
    ],
    "DEFAULT_THROTTLE_CLASSES": [
        "accounts.throttles.AnonApiThrottle",
        "accounts.throttles.UserApiThrottle",
    ],
    # The client address is REMOTE_ADDR: X-Forwarded-For is trusted only behind that many proxies.
    "NUM_PROXIES": env_int("API_NUM_PROXIES", 0, minimum=0),
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    # Strict JSON and a ``detail`` in every error body (core/api_parsers.py, api_errors.py).
    "DEFAULT_PARSER_CLASSES": [
        "core.api_parsers.StrictJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "EXCEPTION_HANDLER": "core.api_errors.api_exception_handler",
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 100,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Hardset API",
    "DESCRIPTION": "Search, generate, annotate and export hard machine-translation test sets.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    # The schema and Swagger UI are for staff, with the UI's assets served from here, not a CDN.
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAdminUser"],
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Run methods appear as a field and as a list; one name for the one choice set.
    "ENUM_NAME_OVERRIDES": {
        "BreakerMethodEnum": "search.models.breaker.BreakerRun.Method",
        "ParallelCorpusStatusEnum": "lexical.models.corpora.ParallelCorpus.Status",
        "ConceptStatusEnum": "lexical.models.concepts.Concept.Status",
        "ConceptOriginEnum": "lexical.models.concepts.Concept.Origin",
        "AnnotatorSourceEnum": "annotation.models.Annotator.Source",
        "RuleJobSourceEnum": "lexical.models.rules.RuleJob.Source",
        # The ranking jobs' statuses (ranking.models.RankingJob: "done", not the kernel's
        # "finished"), which another choice set of "status" fields would otherwise collide with.
        "RankingStatusEnum": "ranking.models.RankingStatus",
    },
}

# --- Engines --------------------------------------------------------------------------------
# Environment variables an engine may name as its API key (names, or prefixes ending in "*").
# The engine test sends the key to a URL staff choose, so nothing else in the environment may
# be named; the server's own secrets are refused even when listed here (engines/keys.py).
ENGINE_KEY_VARIABLES = env_list(
    "ENGINE_KEY_VARIABLES",
    [
        "HARDSET_ENGINE_KEY_*",
        "OPENAI_API_KEY",
        "GEMINI_API_KEY",
        "OPENROUTER_API_KEY",
        "MISTRAL_API_KEY",
        "TOGETHER_API_KEY",
        "HF_TOKEN",
    ],
)

# --- Logging --------------------------------------------------------------------------------
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    "loggers": {"httpx": {"level": "WARNING"}},
}
