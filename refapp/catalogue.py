"""The catalogue of refapp's mutants: each name and the one bug it puts back, and how ``REFAPP_MUTANT`` is read.

Data only, below everything that reads it: ``settings`` parses the variable
with ``parse``; ``mutants.mutant(name)`` is the switch the code asks.
"""
from __future__ import annotations

ENV_VAR = "REFAPP_MUTANT"

MUTANTS: dict[str, str] = {
    "swallow-soft-limit": "the per-document except Exception also catches SoftTimeLimitExceeded and goes on",
    "helper-swallows-abort": "the per-document helper's catch-all swallows the soft limit one level down",
    "sweep-no-isolation": "the overdue sweep stops at the first row that raises",
    "sweep-swallows-deadline": "the sweep's per-row isolation also swallows the soft time limit",
    "cli-budget-wins": "the worker command adds a blanket --soft-time-limit that beats the declared default",
    "dead-config-deadline": "REFAPP_MODEL_DEADLINE_S is read into settings but the model client ignores it",
    "no-deadline": "model calls are made without any timeout",
    "timeout-unlabelled": "a model-call timeout is reported as a generic 'error:' reason",
    "blocking-call-on-loop": "the SQS consumer runs the job's blocking work on its event loop",
    "abandoned-work-writes": "writes and paid calls skip the fencing token and the cancel flag",
    "no-sweeper": "the sweeper finds nothing: abandoned jobs stay where they are",
    "acks-early": "Celery acknowledges a task before it runs (acks_late off)",
    "dlq-before-code-limit": "the SQS queue's max-receives equals the code's max attempts",
    "heartbeat-forever": "the SQS heartbeat extends visibility with no wall-clock cap",
    "fresh-idempotency-key": "each attempt after the first sends a new idempotency key to the paid API",
    "check-after-pay": "'already done?' is asked only before saving, after paying",
    "dual-write": "the API saves the job, then enqueues it separately instead of through the outbox",
    "outbox-mark-before-send": "the relay marks an outbox row sent before sending it",
    "consumer-not-idempotent": "the job and its steps do not ask 'already done?' before running",
    "event-before-commit": "the final status event is published before the final DB write",
    "unstable-job-id": "every submission gets a fresh job id instead of one from (project, file)",
    "reference-table-rescan": "the category table is re-read for every document and row",
    # -- transaction scope
    "sweep-shared-transaction": "the overdue sweep marks every row in one transaction, without a savepoint per row",
    "submit-acks-before-save": "the API answers 202 and saves the job in the background, after the answer",
    # -- fencing on every write path
    "unfenced-final-write": "the job's terminal state is written without checking the attempt still owns the job",
    "pay-before-fence": "the paid call is made before the attempt proves it still owns the job",
    "event-for-refused-write": "the final status event is published even when the fenced write was refused",
    # -- retries around paid calls
    "retry-timed-out-call": "a model call that timed out is retried twice more at once, each with a full deadline",
    # -- cross-job interference
    "step-cache-ignores-job": "'already done?' looks the step up by its name only, so another job's answer is reused",
    "idempotency-key-without-job": "the idempotency key names the step but not the job, so jobs share answers",
    "job-id-ignores-project": "the job id comes from the file name alone: another project's upload of it is no new job",
    # -- limits and their layering
    "model-deadline-over-batch-budget": "the table's per-call deadline (660 s) exceeds the batch's soft limit (600 s)",
    "broker-visibility-below-hard-limit": "the broker's visibility timeout (300 s) is shorter than the task's hard limit",
    "sweep-waits-on-locked-row": "the sweep waits without bound for a row another transaction holds locked",
    # -- outbox and relay error paths
    "relay-drops-after-retries": "the relay marks a row sent once its send retries run out, so an outage loses it",
    "sqs-delete-on-receive": "the SQS consumer deletes a message when it receives it, before the attempt runs",
    # -- heartbeat and sweeper
    "sweeper-judges-by-start-time": "the sweeper calls a job abandoned when it started long ago, whatever its heartbeat",
    "sqs-heartbeat-message-only": "the SQS heartbeat extends the message's visibility but not the job's heartbeat",
    "heartbeat-dies-on-db-error": "the Celery heartbeat thread stops for good at its first database error",
    "claim-steals-live-job": "a delivery claims a running job whatever its heartbeat says",
    # -- reasons
    "give-up-relabels-timeout": "a job given up after attempts that timed out is labelled 'error:', not 'timeout:'",
    "progress-off-by-one": "'timed out after i of n' counts the item in flight as finished",
    "sweep-progress-skips-failed": "a timed-out sweep's reason counts the rows it marked but not the rows that failed",
    # -- final means final
    "sweeper-resends-finished": "the sweeper handles a job it listed without checking again, under the row lock, that it still needs rescuing",
    "redelivery-retries-failed-job": "a message that comes back for a job that failed by a timeout runs the job again",
    # -- a refused submission leaves nothing behind
    "submit-timeout-keeps-saving": "the API answers 503 at its deadline but lets the save it stopped waiting for commit",
    "commit-error-answered-refused": "an error at the submission's COMMIT is answered 503 without looking whether the job was saved",
    # -- connections and transactions are returned
    "row-transaction-leaks-on-error": "a sweep row that raises leaves its transaction open and its connection checked out",
    "duplicate-claim-leaks-connection": "a refused claim returns without closing its connection",
    # -- retries keep their spacing and their budget
    "retry-without-backoff": "an SQS attempt that failed gives its message back at once instead of after the backoff",
    "give-up-one-early": "the SQS consumer gives up on the delivery of the last attempt instead of the one after it",
    "retry-any-exception": "the Celery task retries whatever escapes it, the soft time limit included",
    # -- recovery within a bound, no capacity lost
    "abandoned-attempt-keeps-slot": "an SQS attempt abandoned at its cap keeps its consumer slot for good",
    "consumer-slot-lost-on-error": "a message whose handling raised never gives its consumer slot back",
    # -- status streams over time
    "stream-ends-on-requeue": "a job's status stream ends when its job goes back to the queue, as if it were over",
    "stream-forwards-stale-event": "a status stream forwards an event older than a state it already sent",
    "stream-trusts-events": "a status stream never catches up from the database: a lost event is never made up for",
    "dashboard-reconciles-active-only": "the all-jobs stream catches up only on jobs still in progress, never a finish",
    "all-events-ignores-last-event-id": "a dashboard that reconnects gets new events only, not the changes it missed",
    # -- sweeps over several runs
    "sweep-skips-failed-rows": "a sweep run leaves out the rows an earlier run failed on, for good",
    "sweep-resumes-after-last-id": "a sweep run starts after the highest row the last finished run listed",
    # -- two replicas of a singleton
    "sweeper-rescues-without-recheck": "the sweeper locks a listed job by id and rescues it as listed, without judging it again",
    "claim-read-then-write": "a claim reads the job, decides, then writes by id: two claims at once get one token",
    # -- takeovers on every claim path
    "takeover-keeps-token": "a claim of a stale running job keeps its attempt number: the old attempt still owns it",
    "claim-judges-by-updated-at": "a claim judges a running job abandoned by when its row last changed, not its heartbeat",
    # -- work per item
    "import-category-query-per-row": "each CSV row's category is looked up with a query on the category table",
    "import-dedupe-scans-ledger": "each CSV row is checked against the whole ledger for a duplicate before booking",
    # -- one bad row in a loop over rows
    "sweeper-no-per-job-isolation": "the abandoned-job sweeper's pass ends at the first job whose handling raises",
    "relay-head-of-line": "the relay's pass ends at a row it cannot send: the oldest unsent row blocks every other",
}


class UnknownMutant(ValueError):
    """A mutant name that refapp does not define."""


def parse(text: str) -> frozenset[str]:
    """The set of mutant names in a comma-separated string; UnknownMutant for a typo."""
    names = frozenset(part.strip() for part in text.split(",") if part.strip())
    unknown = sorted(names - MUTANTS.keys())
    if unknown:
        raise UnknownMutant(
            f"{ENV_VAR}: unknown mutant(s) {', '.join(unknown)}; known mutants: {', '.join(MUTANTS)}"
        )
    return names
