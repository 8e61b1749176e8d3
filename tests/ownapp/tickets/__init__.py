"""tickets: support tickets arrive, a worker summarises each with a language model.

The flow: ``intake.open_ticket`` saves a ticket and its outbox row in one
transaction; ``relay`` publishes outbox rows to Celery; the task
``tickets.summarise`` claims the ticket, asks the model for a summary and
saves it; ``sweeper`` finds tickets whose worker died and sends them again,
or hands them to a human agent after too many tries.
"""
