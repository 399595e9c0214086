"""Models of the lexical app (seed 004), one module per stage: parallel corpora (``corpora``),
mined or imported concepts with their variations and study examples (``concepts``). Everything
is re-exported here, so ``from lexical.models import X`` keeps working wherever X lives."""

from lexical.models.concepts import (
    Concept,
    ConceptExample,
    ExampleSelection,
    MiningJob,
    SelectedExample,
    Variation,
)
from lexical.models.corpora import ParallelCorpus, SentencePair
from lexical.models.evaluation import LexicalAnswer, LexicalEvaluation
from lexical.models.mining import MiningState
from lexical.models.rule_validation import RuleValidationStudy
from lexical.models.rules import Rule, RuleJob, RuleJobConcept
from lexical.models.selection_study import SelectionStudy

__all__ = [
    "Concept",
    "ConceptExample",
    "ExampleSelection",
    "LexicalAnswer",
    "LexicalEvaluation",
    "MiningJob",
    "MiningState",
    "ParallelCorpus",
    "Rule",
    "RuleJob",
    "RuleJobConcept",
    "RuleValidationStudy",
    "SelectedExample",
    "SelectionStudy",
    "SentencePair",
    "Variation",
]
