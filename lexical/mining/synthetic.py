"""A seeded synthetic English→Spanish parallel corpus with PLANTED concepts and near-misses.

Every sentence pair is a word-for-word translation in the same order (so an aligner gets it
right), built from a filler vocabulary. A planted concept is an English word with Spanish
variations; each occurrence of a variation comes with one of its own context cue words (a trip
with a *plane* is a *viaje*, with a *museum* a *recorrido*), so a model given rules can tell the
variations apart. Occurrences of the variations are counted exactly, which puts some concepts
exactly at a threshold and some just below one (App. B.1 defaults: 50 links, 2 variations,
entropy 0.69):

===========  =====================================  ==========================================
source       variations (count)                     expected with the defaults
===========  =====================================  ==========================================
trip         viaje 110, recorrido 100, travesía 49  kept; travesía (49) dropped
bank         banco 80, orilla 80                    kept, entropy ln 2
ring         anillo 50, cuadrilátero 50             kept: both exactly at the count threshold
sheet        sábana 58, hoja 50                     kept: entropy 0.69040, just above 0.69
glass        vaso 59, vidrio 50                     dropped: entropy 0.68973, just under 0.69
key          llave 60, clave 49                     dropped: one variation seen 49 times
fan          ventilador 120, aficionado 10          dropped: only one variation ≥ 50
===========  =====================================  ==========================================

Every word is one that simplemma lemmatises to itself (or, for the plural forms, to the
singular); ``tests/lexical/test_mining_synthetic.py`` checks it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

__all__ = [
    "FILLER",
    "PLANTED",
    "PlantedConcept",
    "PlantedVariation",
    "SyntheticPair",
    "expected_concepts",
    "generate",
]


@dataclass(frozen=True)
class PlantedVariation:
    lemma: str
    plural: str
    count: int
    # (English, Spanish) cue words; each occurrence carries one of them.
    cues: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class PlantedConcept:
    lemma: str
    plural: str
    variations: tuple[PlantedVariation, ...]


def _pair(text: str) -> tuple[str, str]:
    english, _, spanish = text.partition(":")
    return (english, spanish)


def _v(lemma: str, plural: str, count: int, *cues: str) -> PlantedVariation:
    return PlantedVariation(lemma, plural, count, tuple(_pair(cue) for cue in cues))


PLANTED: tuple[PlantedConcept, ...] = (
    PlantedConcept(
        "trip",
        "trips",
        (
            _v("viaje", "viajes", 110, "plane:avión", "hotel:hotel", "airport:aeropuerto"),
            _v("recorrido", "recorridos", 100, "museum:museo", "guide:guía", "statue:estatua"),
            _v("travesía", "travesías", 49, "sea:mar", "boat:barco", "sailor:marinero"),
        ),
    ),
    PlantedConcept(
        "bank",
        "banks",
        (
            _v("banco", "bancos", 80, "money:dinero", "loan:préstamo", "cashier:cajero"),
            _v("orilla", "orillas", 80, "river:río", "fish:pez", "mud:barro"),
        ),
    ),
    PlantedConcept(
        "ring",
        "rings",
        (
            _v("anillo", "anillos", 50, "gold:oro", "wedding:boda", "jewel:joya"),
            _v("cuadrilátero", "cuadriláteros", 50, "punch:puñetazo", "fighter:luchador"),
        ),
    ),
    PlantedConcept(
        "sheet",
        "sheets",
        (
            _v("sábana", "sábanas", 58, "bed:cama", "pillow:almohada", "blanket:manta"),
            _v("hoja", "hojas", 50, "paper:papel", "notebook:cuaderno", "page:página"),
        ),
    ),
    PlantedConcept(
        "glass",
        "glasses",
        (
            _v("vaso", "vasos", 59, "wine:vino", "milk:leche", "bottle:botella"),
            _v("vidrio", "vidrios", 50, "window:ventana", "sand:arena", "furnace:horno"),
        ),
    ),
    PlantedConcept(
        "key",
        "keys",
        (
            _v("llave", "llaves", 60, "door:puerta", "lock:cerradura"),
            _v("clave", "claves", 49, "password:contraseña", "secret:secreto", "code:código"),
        ),
    ),
    PlantedConcept(
        "fan",
        "fans",
        (
            _v("ventilador", "ventiladores", 120, "heat:calor", "summer:verano", "breeze:brisa"),
            _v("aficionado", "aficionados", 10, "football:fútbol", "stadium:estadio"),
        ),
    ),
)

# (English, Spanish) words that fill the sentences; the cue words also appear as filler, so an
# aligner learns them from many sentences, not only next to their concept.
FILLER: tuple[tuple[str, str], ...] = tuple(
    _pair(pair)
    for pair in (
        "house:casa dog:perro cat:gato tree:árbol book:libro car:coche city:ciudad "
        "garden:jardín table:mesa school:escuela teacher:maestro water:agua bread:pan "
        "green:verde red:rojo small:pequeño big:grande old:viejo happy:feliz cold:frío "
        "street:calle friend:amigo song:canción night:noche winter:invierno flower:flor "
        "chair:silla computer:ordenador phone:teléfono shirt:camisa shoe:zapato "
        "kitchen:cocina doctor:médico market:mercado island:isla forest:bosque road:camino "
        "bridge:puente village:pueblo farmer:granjero horse:caballo bird:pájaro "
        "apple:manzana cheese:queso coffee:café singer:cantante"
    ).split()
) + tuple(cue for concept in PLANTED for v in concept.variations for cue in v.cues)


@dataclass(frozen=True)
class SyntheticPair:
    src: str
    tgt: str


def expected_concepts(
    min_variation_count: int = 50, min_variations: int = 2, min_entropy: float = 0.69
) -> dict[str, dict[str, int]]:
    """What mining must find in a corpus from :func:`generate`: concept → {variation: count}."""
    from lexical.mining.filters import entropy

    out = {}
    for concept in PLANTED:
        kept = {v.lemma: v.count for v in concept.variations if v.count >= min_variation_count}
        if len(kept) >= min_variations and entropy(list(kept.values())) >= min_entropy:
            out[concept.lemma] = kept
    return out


def _sentence(words: list[tuple[str, str]]) -> SyntheticPair:
    src = " ".join(w for w, _ in words)
    tgt = " ".join(w for _, w in words)
    return SyntheticPair(src[:1].upper() + src[1:] + ".", tgt[:1].upper() + tgt[1:] + ".")


def _filler(rng: np.random.Generator, n: int) -> list[tuple[str, str]]:
    return [FILLER[int(i)] for i in rng.integers(0, len(FILLER), size=n)]


def generate(n_pairs: int, seed: int = 0, plural_rate: float = 0.3) -> Iterator[SyntheticPair]:
    """``n_pairs`` pairs (at least the planted occurrences, 975 of them) in a seeded order.

    Streams: memory does not grow with ``n_pairs`` beyond the planted sentences' positions.
    """
    rng = np.random.default_rng(seed)
    planted = [
        (concept, variation)
        for concept in PLANTED
        for variation in concept.variations
        for _ in range(variation.count)
    ]
    if n_pairs < len(planted):
        raise ValueError(f"a synthetic corpus needs at least {len(planted)} pairs")
    slots = np.sort(rng.choice(n_pairs, size=len(planted), replace=False))
    order = rng.permutation(len(planted))
    next_slot = 0
    for position in range(n_pairs):
        length = int(rng.integers(4, 12))
        words = _filler(rng, length)
        if next_slot < len(slots) and slots[next_slot] == position:
            concept, variation = planted[int(order[next_slot])]
            next_slot += 1
            plural = bool(rng.random() < plural_rate)
            cue = variation.cues[int(rng.integers(0, len(variation.cues)))]
            word = (
                (concept.plural, variation.plural) if plural else (concept.lemma, variation.lemma)
            )
            at = int(rng.integers(0, length))
            words[at:at] = [cue, word]
        yield _sentence(words)
