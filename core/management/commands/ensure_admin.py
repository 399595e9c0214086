import secrets

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from core.env import env_str


class Command(BaseCommand):
    help = (
        "Make sure an admin (staff superuser) exists. Takes HARDSET_ADMIN_USERNAME and "
        "HARDSET_ADMIN_PASSWORD from the environment; otherwise generates a password once, keeps "
        "it in var/admin-password.txt and prints it."
    )

    def handle(self, *args, **options):
        username = env_str("HARDSET_ADMIN_USERNAME", "admin")
        password = env_str("HARDSET_ADMIN_PASSWORD", "") or self._local_password()
        user_model = get_user_model()
        user, created = user_model.objects.get_or_create(
            username=username, defaults={"is_staff": True, "is_superuser": True}
        )
        if created or not user.check_password(password):
            user.is_staff = user.is_superuser = True
            user.set_password(password)
            user.save()
        verb = "Created" if created else "Admin account ready:"
        self.stdout.write(f"{verb} username={username} password={password}")

    def _local_password(self) -> str:
        path = settings.VAR_DIR / "admin-password.txt"
        if path.exists():
            return path.read_text(encoding="utf-8").strip()
        path.parent.mkdir(parents=True, exist_ok=True)
        password = secrets.token_urlsafe(12)
        path.write_text(password + "\n", encoding="utf-8")
        path.chmod(0o600)
        return password
