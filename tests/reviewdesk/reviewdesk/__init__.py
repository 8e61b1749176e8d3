# the Celery app is loaded with Django, so that shared_task uses it
from reviewdesk.celery import app as celery_app

__all__ = ("celery_app",)
