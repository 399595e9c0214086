import signal
import subprocess
import sys
import time

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError


def server_address(host: str, port: str | int) -> str:
    """``host:port`` as ``runserver`` takes it (an IPv6 address in brackets); a bad host or
    port raises :class:`CommandError` naming it."""
    host = str(host).strip().strip("[]")
    text = str(port).strip()
    if not text.isdigit() or not 1 <= int(text) <= 65535:
        raise CommandError(f"port must be a number from 1 to 65535, got {str(port)!r}")
    if not host or any(c.isspace() or c in "/@?#" for c in host):
        raise CommandError(f"host must be a host name or an IP address, got {host!r}")
    return f"[{host}]:{int(text)}" if ":" in host else f"{host}:{int(text)}"


class Command(BaseCommand):
    help = "Start the web server and a Celery worker together; Ctrl-C stops both."

    def add_arguments(self, parser):
        parser.add_argument("--host", default="127.0.0.1", help="Address to serve on.")
        parser.add_argument("--port", default="8000", help="Port to serve on.")
        parser.add_argument("--concurrency", type=int, default=2)

    def handle(self, *args, host: str, port: str, concurrency: int, **options):
        addr = server_address(host, port)
        worker = subprocess.Popen(self._worker_command(concurrency))
        web = subprocess.Popen(
            [sys.executable, "manage.py", "runserver", addr, "--noreload"],
            cwd=settings.BASE_DIR,
        )
        self.stdout.write(
            self.style.SUCCESS(
                f"\nHardset is starting.\n  Dashboard: http://{addr}/\n"
                f"  Health:    http://{addr}/health/   (JSON: http://{addr}/healthz)\n"
                f"  API:       http://{addr}/api/docs/\n  Admin:     http://{addr}/admin/\n"
                "Press Ctrl-C to stop the web server and the worker.\n"
            )
        )
        try:
            while web.poll() is None and worker.poll() is None:
                time.sleep(0.5)
        except KeyboardInterrupt:
            pass
        finally:
            self._stop(web, worker)
        failed = web.returncode not in (0, -signal.SIGTERM, -signal.SIGINT, None)
        if failed:
            raise SystemExit(web.returncode)

    def _worker_command(self, concurrency: int) -> list[str]:
        command = [
            sys.executable, "-m", "celery", "-A", "config", "worker",
            # One worker for every queue on the embedded default; local models stay loaded in
            # its processes (production runs a separate worker for local_models: README).
            "-Q", ",".join(
                (settings.CELERY_TASK_DEFAULT_QUEUE, settings.CELERY_SLOW_QUEUE,
                 settings.CELERY_LOCAL_MODELS_QUEUE)
            ),
            "--concurrency", str(concurrency), "--loglevel", "INFO",
            # Embedded beat: the periodic sweep for stalled search runs (one beat per site).
            "--beat", "--schedule", settings.CELERY_BEAT_SCHEDULE_FILENAME,
        ]  # fmt: skip
        if settings.CELERY_BROKER_URL.startswith("filesystem://"):
            # The filesystem transport has no broadcast channel for these worker-to-worker chats.
            command += ["--without-gossip", "--without-mingle", "--without-heartbeat"]
        return command

    def _stop(self, *processes: subprocess.Popen) -> None:
        for process in processes:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 15
        for process in processes:
            try:
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                process.kill()
        self.stdout.write("Stopped the web server and the worker.")
