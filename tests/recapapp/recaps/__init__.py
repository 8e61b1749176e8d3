"""recaps: a meeting's transcript comes in, its summary and action items come out, in the background.

``POST /recaps`` (``api.py``) validates the request and hands it to
``service.submit_recap``, which saves the recap row and queues the Celery
task ``recaps.summarise`` (``tasks.py``). The task asks one model for the
summary (OpenRouter) and another for the action items (OpenAI), saving each
step. Celery beat runs ``recaps.sweep`` every minute: recaps whose worker
died are queued again, or failed after too many attempts.
"""
