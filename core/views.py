from __future__ import annotations

from django.contrib.admin.views.decorators import staff_member_required
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST

from core import health
from core.http import HtmxHttpRequest
from core.models import WorkerHeartbeat, WorkerProbe
from core.navigation import areas_for


@login_required
def home(request: HttpRequest) -> HttpResponse:
    """Staff land on the dashboard; everyone else on the first area open to them."""
    if request.user.is_staff:
        return redirect("dashboard")
    areas = areas_for(request.user)
    if areas:
        return redirect(areas[0].url())
    return render(request, "platform/no_tasks.html")


@staff_member_required
def dashboard(request: HttpRequest) -> HttpResponse:
    context = {
        "areas": areas_for(request.user),
        "health": health.report(),
        "workers": WorkerHeartbeat.objects.all()[:20],
    }
    return render(request, "platform/dashboard.html", context)


@staff_member_required
def health_page(request: HtmxHttpRequest) -> HttpResponse:
    template = "platform/health.html#status" if request.htmx else "platform/health.html"
    context = {
        "health": health.report(),
        "workers": WorkerHeartbeat.objects.all()[:50],
        "probes": WorkerProbe.objects.all()[:10],
    }
    return render(request, template, context)


@staff_member_required
@require_POST
def probe_worker(request: HttpRequest) -> HttpResponse:
    health.start_probe()
    return redirect("health")


@never_cache
@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    """Machine-readable health for load balancers and monitors; no login, no secrets."""
    body = health.report()
    reachable = body["database"]["ok"] and body["broker"]["ok"]
    return JsonResponse(body, status=200 if reachable else 503)


def moved_to(prefix: str):
    """A view that sends a page's old address to ``prefix`` + the rest of the path, with the
    query string, permanently (bookmarks and links in old exports keep working)."""

    def redirect_view(request: HttpRequest, rest: str) -> HttpResponse:
        query = request.META.get("QUERY_STRING", "")
        return redirect(prefix + rest + (f"?{query}" if query else ""), permanent=True)

    return redirect_view
