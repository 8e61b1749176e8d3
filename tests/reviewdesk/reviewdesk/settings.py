"""Settings of reviewdesk: every deployment-specific value comes from the environment."""
import os
from pathlib import Path

import dj_database_url

BASE_DIR = Path(__file__).resolve().parent.parent

SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "reviewdesk-development-only")
DEBUG = os.environ.get("DJANGO_DEBUG", "") == "1"
ALLOWED_HOSTS = os.environ.get("DJANGO_ALLOWED_HOSTS", "127.0.0.1,localhost").split(",")

INSTALLED_APPS = [
    "django.contrib.contenttypes",
    "django.contrib.auth",
    "contracts",
]
MIDDLEWARE = ["django.middleware.common.CommonMiddleware"]
ROOT_URLCONF = "reviewdesk.urls"
WSGI_APPLICATION = "reviewdesk.wsgi.application"
USE_TZ = True
TIME_ZONE = "UTC"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Postgres through psycopg 3; persistent connections, checked before reuse (the server may restart)
DATABASES = {
    "default": dj_database_url.config(
        env="DATABASE_URL", default="postgresql://reviewdesk@127.0.0.1:5432/reviewdesk",
        conn_max_age=60, conn_health_checks=True),
}

# -- Celery (read by reviewdesk/celery.py with namespace="CELERY") ------------------
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "redis://127.0.0.1:6379/0")
CELERY_TASK_IGNORE_RESULT = True
# acknowledged after the task ran: a worker that dies mid-review leaves the message in Redis
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BROKER_TRANSPORT_OPTIONS = {
    # longer than a review may take (its hard limit), shorter than a person waits
    "visibility_timeout": float(os.environ.get("REVIEW_BROKER_VISIBILITY_S", "960")),
    "unacked_restore_interval": float(os.environ.get("REVIEW_BROKER_RESTORE_EVERY_S", "60")),
    "unacked_restore_throttle": 1,
}
CELERY_BEAT_SCHEDULE = {
    "sweep-stale-reviews": {
        "task": "contracts.tasks.sweep_stale_reviews",
        "schedule": float(os.environ.get("REVIEW_SWEEP_EVERY_S", "60")),
    },
}

# -- the model ------------------------------------------------------------------------
OPENAI_BASE_URL = os.environ.get("OPENAI_BASE_URL", "https://api.openai.com/v1")
OPENAI_API_KEY = os.environ.get("OPENAI_API_KEY", "")
REVIEW_MODEL = os.environ.get("REVIEW_MODEL", "gpt-4o-mini")
# one model call: p99 is ~35 s, the slowest seen ~11 min; past this a clause review fails "timeout"
REVIEW_MODEL_TIMEOUT_S = float(os.environ.get("REVIEW_MODEL_TIMEOUT_S", "120"))
# a whole review (up to 20 clauses and the summary); the soft limit leaves time to save the outcome
REVIEW_SOFT_LIMIT_S = float(os.environ.get("REVIEW_SOFT_LIMIT_S", "600"))
REVIEW_HARD_LIMIT_S = float(os.environ.get("REVIEW_HARD_LIMIT_S", "660"))
# a review claimed this long ago with no heartbeat has lost its worker (longer than the hard limit)
REVIEW_STALE_AFTER_S = float(os.environ.get("REVIEW_STALE_AFTER_S", "720"))
# a review queued this long ago and never claimed lost its message: sent again
REVIEW_QUEUED_TOO_LONG_S = float(os.environ.get("REVIEW_QUEUED_TOO_LONG_S", "1200"))
REVIEW_MAX_ATTEMPTS = int(os.environ.get("REVIEW_MAX_ATTEMPTS", "3"))

# known mistakes this app can be switched into, one at a time (contracts/bugs.py)
REVIEWDESK_BUG = os.environ.get("REVIEWDESK_BUG", "")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": "INFO"},
}
