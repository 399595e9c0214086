from django.apps import AppConfig

from core.navigation import Area


class AnnotationConfig(AppConfig):
    name = "annotation"
    verbose_name = "Annotation"
    areas: tuple = (
        Area(
            "Annotation",
            "annotation:campaigns",
            "ESA, MQM and choice campaigns: import, sign-up links, annotators, quality control.",
            staff_only=True,
            order=30,
        ),
        Area(
            "My tasks",
            "annotation:my_tasks",
            "The campaigns you annotate, with your progress.",
            staff_only=False,
            order=5,
        ),
    )

    def ready(self) -> None:
        from annotation import import_kinds

        import_kinds.register()
