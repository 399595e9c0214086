from django.apps import AppConfig


class LexicalConfig(AppConfig):
    name = "lexical"
    verbose_name = "Lexical selection"
    areas: tuple = ()

    def ready(self) -> None:
        import rounds
        from lexical.mining.services import recover_mining

        rounds.register(rounds.JobKind("lexical mining", recover_mining))
