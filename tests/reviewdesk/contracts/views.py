"""A small JSON API: submit a contract for review, read a review's status."""
import json

from django.http import HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_http_methods

from contracts.models import FINAL_STATUSES, ContractReview
from contracts.services import submit_review


@require_GET
def health(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"ok": True})


@csrf_exempt
@require_http_methods(["POST"])
def reviews(request: HttpRequest) -> JsonResponse:
    try:
        body = json.loads(request.body or b"{}")
        title, clauses = str(body["title"]), [str(c) for c in body["clauses"]]
    except (ValueError, KeyError, TypeError) as exc:
        return JsonResponse({"error": f"expected {{'title': str, 'clauses': [str]}}: {exc!r}"}, status=400)
    try:
        review_id = submit_review(title, clauses, tier=body.get("tier", ContractReview.Tier.STANDARD))
    except ValueError as exc:
        return JsonResponse({"error": str(exc)}, status=400)
    return JsonResponse({"id": review_id, "status": ContractReview.Status.QUEUED}, status=201)


@require_GET
def review_detail(request: HttpRequest, review_id: int) -> JsonResponse:
    review = ContractReview.objects.filter(pk=review_id).first()
    if review is None:
        return JsonResponse({"error": f"no review {review_id}"}, status=404)
    return JsonResponse({"id": review.pk, "status": review.status, "final": review.status in FINAL_STATUSES,
                         "reason": review.failure_reason, "summary": review.summary})
