"""Several users at once: uploads from different users, projects and files, for the multi-job scenarios.

One job per user hides a whole class of bugs: a key, a cache or an id that
is unique per job only by accident. These uploads differ in user, project
and document text, and two of them share a file name (each project has its
own ``invoice.pdf``), as real uploads do.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, overload

from scenarios.refapp_client import RefApp


@dataclass(frozen=True)
class Upload:
    """One user's upload."""

    user: str
    project: str
    file: str
    documents: tuple[str, ...]


UPLOADS = (
    Upload("ana", "acme-books", "invoice.pdf", ("invoice 4711 from ACME, payable in 30 days",
                                                "hotel receipt, paid, thank you")),
    Upload("ben", "initech-tax", "invoice.pdf", ("invoice 0815 from Initech, due on receipt",
                                                 "quarterly report summary")),
    Upload("cho", "globex-hr", "contracts.pdf", ("employment contract between the parties",
                                                 "dear Ms Cho, kind regards")),
)


@overload
def submit_all(refapp: RefApp, uploads: tuple[Upload, ...] = UPLOADS, *, expect: Literal[202] = 202,
               **extra: Any) -> list[str]: ...
@overload
def submit_all(refapp: RefApp, uploads: tuple[Upload, ...] = UPLOADS, *, expect: int | None,
               **extra: Any) -> list[str | None]: ...


def submit_all(refapp: RefApp, uploads: tuple[Upload, ...] = UPLOADS, *, expect: int | None = 202,
               **extra: Any) -> list[str] | list[str | None]:
    """Submit every upload; the job ids (None for an answer that was not 2xx when ``expect=None``)."""
    return [refapp.submit(list(u.documents), project=u.project, file=u.file, user=u.user, expect=expect, **extra)
            for u in uploads]


def document_count(uploads: tuple[Upload, ...] = UPLOADS) -> int:
    """How many documents (paid steps) the uploads hold in all."""
    return sum(len(u.documents) for u in uploads)
