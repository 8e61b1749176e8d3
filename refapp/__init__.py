"""refapp: a document-processing job system built the right way, with named mutants.

Users upload a batch of documents (or a CSV import); workers normalise each
document, ask a paid model for its category and save the result; a sweep
marks overdue invoices; a sweeper finds jobs nobody works on. Every defence
the harness checks for is here once, and ``refapp.mutants`` can take each
one away by name (``REFAPP_MUTANT=<name>``). See ``refapp/README.md``.
"""
