"""A ``job_id_from = "module:callable"`` target for the instrumentation tests."""


def job_of(task, args, kwargs):
    """The job id of a task run, from its arguments."""
    return f"called-{args[0]}"
