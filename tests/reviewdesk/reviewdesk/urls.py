from django.urls import path

from contracts import views

urlpatterns = [
    path("health", views.health),
    path("api/reviews", views.reviews),
    path("api/reviews/<int:review_id>", views.review_detail),
]
