"""A contract review: one job per uploaded contract, and the saved result of each of its steps."""
from django.db import models


class ContractReview(models.Model):
    """One contract to review: each clause is assessed by the model, then the whole is summarised."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        REVIEWING = "reviewing", "Reviewing"
        REVIEWED = "reviewed", "Reviewed"
        FAILED = "failed", "Failed"
        NEEDS_LAWYER = "needs_lawyer", "Needs a lawyer"

    class Tier(models.TextChoices):
        STANDARD = "standard", "Standard"
        EXPRESS = "express", "Express"

    title = models.CharField(max_length=200)
    clauses = models.JSONField(default=list)
    tier = models.CharField(max_length=20, choices=Tier.choices, default=Tier.STANDARD)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.QUEUED)
    attempts = models.PositiveIntegerField(default=0)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    failure_reason = models.TextField(blank=True, default="")
    summary = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [models.Index(fields=["status", "heartbeat_at"])]

    def __str__(self) -> str:
        return f"review {self.pk} ({self.status})"


# a person sees these as final: the review page stops polling
FINAL_STATUSES = (ContractReview.Status.REVIEWED, ContractReview.Status.FAILED, ContractReview.Status.NEEDS_LAWYER)


class ReviewStep(models.Model):
    """The saved answer of one paid step of a review (a clause's risks, the summary): never paid twice."""

    review = models.ForeignKey(ContractReview, on_delete=models.CASCADE, related_name="steps")
    name = models.CharField(max_length=40)
    output = models.TextField()
    attempt = models.PositiveIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["review", "name"], name="one_result_per_step")]
