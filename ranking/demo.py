"""Offline demo data of the ranking app (called by ``manage.py load_demo`` after the difficulty
demo; idempotent by name): the synthetic difficulty demo's systems ranked with significance
clusters, its hardest segments (by length) measured against random ones, and the allocation
policies replayed on it. Each runs in the foreground here (about 5 s in all) and is named as
built on synthetic scores, like the dataset it reads.

And an adaptive ESA campaign to work through: three systems' German on eight segments, a careful
one, a hasty one that leaves things out and a literal one (false friends, idioms word for word),
handed out by the ``settle`` policy until the top cluster is settled (README, "Adaptive
multi-system campaigns"): score them as they deserve and it closes itself before the 24th item.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db import models

from annotation.models import Campaign
from annotation.services.campaigns import create_campaign
from difficulty.demo import DIFFICULTY_DEMO_NAME
from difficulty.models import DifficultyDataset, DifficultyEvaluation
from ranking import services as rankings
from ranking.models import SystemRanking
from ranking.replays import services as replays
from ranking.replays.models import ReplayRun
from ranking.subsets import services as analyses
from ranking.subsets.models import DiscriminationAnalysis
from rounds.models import RoundJob

DEMO_PAIR = "en-de"
RANKING_NAME = "Demo: synthetic en-de systems (not human scores)"
ANALYSIS_NAME = "Demo: hardest synthetic en-de segments by length"
REPLAY_NAME = "Demo: allocation policies on synthetic en-de"
# Fewer seeds and checkpoints than a replay's defaults: the curves are for a first look, and the
# replay runs while `make run` starts.
REPLAY_SEEDS, REPLAY_CHECKPOINTS = 8, 20

ADAPTIVE_NAME = "Demo adaptive ESA en→de (3 systems)"
_SYSTEMS = ("demo-careful", "demo-hasty", "demo-literal")
_SEGMENTS = [
    ("news-1", "The city council approved the new budget on Tuesday.",
     "Der Stadtrat hat am Dienstag den neuen Haushalt genehmigt.",
     "Der Stadtrat hat den Haushalt genehmigt.",
     "Die Stadt Rat genehmigte das neue Budget auf Dienstag."),
    ("news-1", "Critics say the plan ignores rising rents.",
     "Kritiker sagen, der Plan ignoriere die steigenden Mieten.",
     "Kritiker sagen, der Plan ignoriert Mieten.",
     "Kritiker sagen der Plan ignoriert aufsteigende Renten."),
    ("news-1", "The mayor promised more affordable housing by next spring.",
     "Der Bürgermeister versprach bis zum nächsten Frühjahr mehr bezahlbaren Wohnraum.",
     "Der Bürgermeister versprach mehr Wohnraum.",
     "Der Bürgermeister versprach mehr erschwingliches Gehäuse durch nächste Quelle."),
    ("chat-1", "Break a leg at your audition!",
     "Hals- und Beinbruch bei deinem Vorsprechen!",
     "Viel Glück!",
     "Brich dir ein Bein bei deinem Vorsprechen!"),
    ("chat-1", "It's raining cats and dogs, so bring an umbrella.",
     "Es regnet in Strömen, also bring einen Regenschirm mit.",
     "Es regnet, bring einen Schirm.",
     "Es regnet Katzen und Hunde, also bring einen Regenschirm."),
    ("travel-1", "The museum opens at nine in the morning.",
     "Das Museum öffnet um neun Uhr morgens.",
     "Das Museum öffnet um neun.",
     "Das Museum öffnet bei neun in dem Morgen."),
    ("office-1", "Please send me the report by Friday.",
     "Bitte schicken Sie mir den Bericht bis Freitag.",
     "Schicken Sie mir den Bericht.",
     "Bitte senden mich den Bericht durch Freitag."),
    ("travel-1", "He forgot his umbrella on the train.",
     "Er hat seinen Regenschirm im Zug vergessen.",
     "Er vergaß seinen Schirm.",
     "Er vergaß seinen Regenschirm auf dem Zug."),
]  # fmt: skip

Start = Callable[..., RoundJob]
Run = Callable[[int], RoundJob]


def load_demo(stdout) -> None:
    _adaptive_campaign(stdout)
    dataset = DifficultyDataset.objects.filter(name=DIFFICULTY_DEMO_NAME).first()
    if dataset is None:
        stdout.write(f"ranking: no {DIFFICULTY_DEMO_NAME!r} dataset, so no ranking demo")
        return
    evaluation = DifficultyEvaluation.objects.filter(dataset=dataset).order_by("pk").first()
    demos: list[tuple[type[models.Model], str, Start, Run, dict[str, Any]]] = [
        (SystemRanking, RANKING_NAME, rankings.start_ranking, rankings.run_in_foreground,
         {"input_kind": "dataset"}),
        (DiscriminationAnalysis, ANALYSIS_NAME, analyses.start_analysis,
         analyses.run_in_foreground,
         {"subject_kind": "hardest", "evaluation": evaluation, "estimator": "length"}),
        (ReplayRun, REPLAY_NAME, replays.start_replay, replays.run_in_foreground,
         {"n_seeds": REPLAY_SEEDS, "n_checkpoints": REPLAY_CHECKPOINTS}),
    ]  # fmt: skip
    for model, name, start, run, settings in demos:
        if model._default_manager.filter(name=name).exists():
            stdout.write(f"ranking: {name!r} already there")
            continue
        job = run(start(name=name, dataset=dataset, language_pair=DEMO_PAIR, enqueue=False,
                        **settings).pk)  # fmt: skip
        stdout.write(f"ranking: {name!r} ({job.status})")


def _adaptive_campaign(stdout) -> None:
    if Campaign.objects.filter(name=ADAPTIVE_NAME).exists():
        stdout.write(f"ranking: {ADAPTIVE_NAME!r} already there")
        return
    items = [
        {"doc_id": doc, "seg_id": str(number), "src_lang": "en", "tgt_lang": "de",
         "source": source, "target": target, "system": system, "origin": "demo"}
        for number, (doc, source, *targets) in enumerate(_SEGMENTS, start=1)
        for system, target in zip(_SYSTEMS, targets, strict=True)
    ]  # fmt: skip
    create_campaign(
        ADAPTIVE_NAME, "esa", items, overlap=1,
        assignment_policy="settle", assignment_goal="top", assignment_alpha=0.05,
        instructions="Three systems translated the same sentences. Mark the errors, then score "
        "each translation from 0 to 100; the campaign closes once the best system is clear.",
    )  # fmt: skip
    stdout.write(f"ranking: {ADAPTIVE_NAME!r} with {len(items)} items, policy settle")
