"""Production settings (ADR 0017): the WSGI server is installed, HTTPS hardening comes from the
environment, `check --deploy` is clean, and every page carries a strict Content Security Policy."""

from __future__ import annotations

import http.client
import os
import re
import secrets
import socket
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from core.env import env_proxy_ssl_header
from tests.conftest import REPO_ROOT

HTTPS = {
    "SECURE_SSL_REDIRECT": "true",
    "SECURE_HSTS_SECONDS": "31536000",
    "SECURE_HSTS_INCLUDE_SUBDOMAINS": "true",
    "SECURE_HSTS_PRELOAD": "true",
    "SECURE_PROXY_SSL_HEADER": "X-Forwarded-Proto",
}


def production_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """This process's environment as a deployment sets it: debug off, a real key, HTTPS on."""
    kept = {k: v for k, v in os.environ.items() if not k.startswith(("DEBUG", "SECRET_KEY"))}
    return kept | {
        "DEBUG": "false",
        "SECRET_KEY": secrets.token_urlsafe(64),
        "ALLOWED_HOSTS": "hardset.example.org",
        "HARDSET_VAR_DIR": str(tmp_path),
        "DATABASE_URL": f"sqlite:///{tmp_path / 'deploy.sqlite3'}",
        **HTTPS,
        **extra,
    }


def manage(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def test_gunicorn_is_a_dependency_and_serves_the_wsgi_app_the_readme_names(tmp_path):
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    names = [
        re.split(r"[<>=!~\[ ]", req, maxsplit=1)[0] for req in project["project"]["dependencies"]
    ]
    assert "gunicorn" in names
    running = (REPO_ROOT / "README.md").read_text(encoding="utf-8").split("## Running for real")[1]
    assert "`gunicorn -c config/gunicorn.py config.wsgi" in running.split("\n## ")[0]

    checked = subprocess.run(
        [sys.executable, "-m", "gunicorn", "-c", "config/gunicorn.py", "--check-config",
         "config.wsgi"],
        cwd=REPO_ROOT, env=production_env(tmp_path), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert checked.returncode == 0, checked.stderr


def test_the_gunicorn_settings_serve_and_keep_connections_alive(tmp_path):
    """config/gunicorn.py, as the README's deployment runs it: two requests on one connection."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = production_env(tmp_path)
    assert manage(env, "migrate", "--no-input").returncode == 0
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-c", "config/gunicorn.py", "--workers", "1",
         "--bind", f"127.0.0.1:{port}", "config.wsgi"],
        cwd=REPO_ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    headers = {"Host": "hardset.example.org", "X-Forwarded-Proto": "https"}
    try:
        first = _get_when_up(port, "/healthz", headers)
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        statuses = []
        for _ in range(2):
            response = _get(connection, "/healthz", headers)
            statuses.append((response.status, response.getheader("Connection")))
        reused = connection.sock is not None
        connection.close()
    finally:
        server.terminate()
        _out, errors = server.communicate(timeout=30)
    assert first.status == 200, errors
    assert statuses == [(200, "keep-alive"), (200, "keep-alive")]
    assert reused


def _get(
    connection: http.client.HTTPConnection, path: str, headers: dict[str, str]
) -> http.client.HTTPResponse:
    """The response, read, so that the connection can carry the next request."""
    connection.request("GET", path, headers=headers)
    response = connection.getresponse()
    response.read()
    return response


def _get_when_up(port: int, path: str, headers: dict[str, str]) -> http.client.HTTPResponse:
    """The first answer once gunicorn is up. The arbiter listens before its worker has imported
    Django, so under load a request may also wait past the timeout or be dropped while it boots."""
    deadline = time.monotonic() + 60
    while True:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        try:
            return _get(connection, path, headers)
        except (ConnectionError, TimeoutError):  # refused, reset or dropped (RemoteDisconnected)
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
        finally:
            connection.close()


def test_check_deploy_is_clean_under_production_settings(tmp_path):
    result = manage(production_env(tmp_path), "check", "--deploy", "--fail-level", "WARNING")

    assert result.returncode == 0, result.stderr
    assert "System check identified no issues (0 silenced)." in result.stdout
    assert "WARNINGS" not in result.stderr


def test_check_deploy_names_the_https_settings_left_off(tmp_path):
    env = production_env(tmp_path)
    for name in HTTPS:
        del env[name]

    result = manage(env, "check", "--deploy")

    assert "security.W004" in result.stderr  # no HSTS
    assert "security.W008" in result.stderr  # no redirect to HTTPS


def test_a_malformed_https_variable_stops_start_up(tmp_path):
    result = manage(production_env(tmp_path, SECURE_HSTS_SECONDS="a year"), "check")

    assert result.returncode != 0
    assert "SECURE_HSTS_SECONDS='a year' is not an integer" in result.stderr


def test_the_proxy_header_is_a_header_name_the_proxy_sets_to_https():
    assert env_proxy_ssl_header("H", {"H": "X-Forwarded-Proto"}) == (
        "HTTP_X_FORWARDED_PROTO",
        "https",
    )
    assert env_proxy_ssl_header("H", {}) is None
    with pytest.raises(ImproperlyConfigured, match=r"H='X-Forwarded-Proto: https' is not an HTTP"):
        env_proxy_ssl_header("H", {"H": "X-Forwarded-Proto: https"})


@pytest.mark.django_db
def test_the_https_redirect_spares_the_health_probe(client, settings):
    settings.SECURE_SSL_REDIRECT = True

    assert client.get("/accounts/login/")["Location"] == "https://testserver/accounts/login/"
    assert client.get("/healthz").status_code in (200, 503)
    assert client.get("/accounts/login/", headers={"X-Forwarded-Proto": "https"}).status_code == 301
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    assert client.get("/accounts/login/", headers={"X-Forwarded-Proto": "https"}).status_code == 200


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/accounts/login/", "/dashboard/", "/api/docs/"])
def test_every_page_has_a_strict_content_security_policy(admin_client, path):
    policy = admin_client.get(path)["Content-Security-Policy"]

    directives = dict(part.strip().split(" ", 1) for part in policy.split(";"))
    assert directives["default-src"] == "'self'"
    assert directives["script-src"] == "'self'"
    assert directives["style-src"] == "'self'"
    assert directives["object-src"] == "'none'"
    assert "unsafe" not in policy


INLINE = re.compile(
    r"<script(?![^>]*\bsrc=)[^>]*>"  # a script element with code in it
    r"|<style\b"
    r"|\sstyle=|\son[a-z]+=|\shx-on[:-]"  # style attributes, event-handler attributes
    r"|javascript:",
    re.IGNORECASE,
)


def test_no_template_runs_or_styles_anything_inline():
    """The CSP refuses these; behaviour lives in static/js/hardset.js (data- attributes)."""
    found = [
        f"{path.relative_to(REPO_ROOT)}:{number}: {line.strip()[:80]}"
        for path in sorted(
            [*REPO_ROOT.glob("templates/**/*.html"), *REPO_ROOT.glob("*/templates/**/*.html")]
        )
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if INLINE.search(line.replace('type="application/json"', ""))
    ]
    assert found == []
