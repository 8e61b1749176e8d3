"""A deliberately lean job app for the nightly load benchmark (``benchmarks/nightly.py --app-dir``).

Its only purpose is to cost little per job, so that a nightly run's
throughput is bound by the harness and the stack, not by the app: an HTTP
API that saves a job and queues its id on a Redis list, workers that take
ids off the list and make one paid call per job, and a sweeper that sends
again the jobs a killed worker left behind. It is built the right way
(stable idempotency key, attempt-fenced writes, a deadline on the paid
call), so a nightly run over it with faults on is valid.
"""
