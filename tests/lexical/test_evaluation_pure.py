"""The pure parts of the model evaluation (seed 004 §4, App. B.2–B.4): no database."""

from __future__ import annotations

import math

import pytest

from lexical.evaluation import charts, metrics, prompts
from lexical.evaluation.entries import Entry, EntryError, parse_entry
from lexical.evaluation.matching import extract_answer, match_variation
from lexical.evaluation.options import option_order

# --- Prompts (Fig. 7/8) ------------------------------------------------------------------------


def test_the_prompt_without_rules_is_the_papers_fig_7():
    text = prompts.selection_prompt("trip", "We took a long trip.", ["viaje", "recorrido"])
    assert text == (
        'Please select the best translation of "trip" in "We took a long trip." from the '
        'following list: ["viaje", "recorrido"]. Carefully explain your reasoning first and '
        "then enclose your final answer like this ```answer```."
    )


def test_the_prompt_with_rules_starts_with_the_rules_block_in_option_order():
    rules = {"recorrido": "Use «recorrido» for a route.", "viaje": "Use «viaje» for\ntravel."}
    text = prompts.selection_prompt("trip", "A trip.", ["viaje", "recorrido"], rules)
    lines = text.split("\n")
    assert lines[:3] == [
        "Rules:",
        "- viaje: Use «viaje» for travel.",  # line breaks inside a rule are flattened
        "- recorrido: Use «recorrido» for a route.",
    ]
    assert lines[3] == ""
    assert (
        'Please select the best translation of "trip" in "A trip." from the following list: '
        '["viaje", "recorrido"].' in lines[4]
    )


def test_non_ascii_labels_stay_as_written_and_the_reminder_is_appended_to_the_prompt():
    messages = prompts.selection_messages("plane", "The plane left.", ["vliegtuig", "vlak", "ŝipo"])
    assert '["vliegtuig", "vlak", "ŝipo"]' in messages[0]["content"]
    again = prompts.reask_messages(messages, ["vliegtuig", "vlak", "ŝipo"])
    assert len(again) == 1 and messages[0]["content"] != again[0]["content"]
    assert again[0]["content"].endswith(
        'Please enclose your selected translation from ["vliegtuig", "vlak", "ŝipo"] '
        "with 3 back ticks."
    )


# --- Entries -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "entry"),
    [
        ("gpt:none", Entry("gpt", "chat", "none", "")),
        ("gpt:self", Entry("gpt", "chat", "self", "gpt")),
        ("llama3:8b:other:gpt-4", Entry("llama3:8b", "chat", "other", "gpt-4")),
        ("nllb:translate", Entry("nllb", "translate", "translate", "")),
    ],
)
def test_entries_parse_from_their_keys_and_back(spec, entry):
    assert parse_entry(spec) == entry
    assert entry.key == spec


@pytest.mark.parametrize("spec", ["", "gpt", ":none", "gpt:rules", "gpt:other:", 5, None])
def test_bad_entries_are_refused(spec):
    with pytest.raises(EntryError):
        parse_entry(spec)


# --- Answers and matching (App. B.2–B.3) -------------------------------------------------------


def test_the_last_backtick_block_is_the_answer():
    assert extract_answer("I compare ```viaje``` and ```recorrido```. So: ```recorrido```") == (
        "recorrido"
    )
    assert extract_answer('Reasoning.\n```\n"viaje".\n```') == "viaje"
    assert extract_answer("No template here: viaje") is None
    assert extract_answer("enclose it like ```answer``` ... ``` ```") is None


VARIATIONS = [["viaje", "viajes"], ["recorrido", "recorridos"], ["vía"]]


def test_exact_forms_match_on_word_boundaries_case_insensitively():
    assert match_variation("Un VIAJE largo", VARIATIONS).index == 0
    # "vía" is not found inside "vías" nor "desviación"; "recorridos" is exact.
    found = match_variation("desviación de vías, recorridos", VARIATIONS)
    assert (found.index, found.form, found.exact) == (1, "recorridos", True)


def test_the_longest_exact_form_wins_then_the_earliest():
    found = match_variation("los viajes y el recorrido", VARIATIONS)
    assert (found.index, found.form) == (1, "recorrido")  # 9 characters beat 7
    assert match_variation("viaje o vía", [["vía"], ["viaje"]]).index == 1


def test_fuzzy_matching_takes_the_best_ratio_at_or_above_0_7():
    # "viajar" against "viaje": rapidfuzz ratio 2*4/11 = 0.727 ≥ 0.7.
    found = match_variation("Vamos a viajar mañana", VARIATIONS)
    assert found.index == 0 and not found.exact
    assert math.isclose(found.ratio, 8 / 11)
    # "recorrer" against "recorrido": 2*6/17 = 0.706 ≥ 0.7.
    assert match_variation("hay que recorrer", VARIATIONS).index == 1
    # "camino" is like none of them.
    assert match_variation("un camino", VARIATIONS) is None


def test_multiword_forms_match_over_ngrams_and_unspaced_scripts_as_substrings():
    assert match_variation("took the plane out", [["take off"], ["took out"]]).index == 1
    assert match_variation("私は飛行機に乗った", [["電車"], ["飛行機"]]).index == 1


def test_an_llm_answer_is_also_compared_whole():
    found = match_variation("viajes largos", [["viajes largos"], ["viaje"]], whole=True)
    assert found.index == 0


# --- Option order (App. B.4) -------------------------------------------------------------------


def test_option_orders_are_fixed_by_seed_run_and_example():
    ids = [11, 12, 13]
    first = option_order(7, 0, 100, ids)
    assert sorted(first) == ids
    assert option_order(7, 0, 100, ids) == first
    orders = {
        tuple(option_order(7, run, example, ids)) for run in range(3) for example in range(30)
    }
    assert len(orders) == 6  # every permutation shows up over 90 draws
    assert option_order(-5, 0, 1, ids) == option_order(-5, 0, 1, ids)


# --- Metrics -----------------------------------------------------------------------------------


def G(entry, run, example, concept, correct, position=None, options=2, language="es"):
    return metrics.Graded(entry, run, example, concept, language, correct, position, options)


# Concept 1 has three examples, concept 2 one. Run 0: 1,1,0 | 1 → micro 3/4, macro (2/3+1)/2.
# Run 1: 1,0,0 | 0 → micro 1/4, macro (1/3+0)/2. Run 2: 1,1,1 | 0 → micro 3/4, macro (1+0)/2.
ANSWERS = [
    G("m", 0, 1, 1, True, 0), G("m", 0, 2, 1, True, 1), G("m", 0, 3, 1, False, 0),
    G("m", 0, 4, 2, True, 0, options=3),
    G("m", 1, 1, 1, True, 1), G("m", 1, 2, 1, False, None), G("m", 1, 3, 1, False, 1),
    G("m", 1, 4, 2, False, 2, options=3),
    G("m", 2, 1, 1, True, 0), G("m", 2, 2, 1, True, 0), G("m", 2, 3, 1, True, 1),
    G("m", 2, 4, 2, False, 2, options=3),
]  # fmt: skip


def test_micro_and_macro_accuracy_per_run():
    by_run = metrics.run_accuracies(ANSWERS)
    assert by_run[("m", "es", 0)] == pytest.approx((0.75, 5 / 6, 4))
    assert by_run[("m", "es", 1)] == pytest.approx((0.25, 1 / 6, 4))
    assert by_run[("m", "es", 2)] == pytest.approx((0.75, 0.5, 4))


def test_mean_and_sample_sd_over_runs():
    (row,) = metrics.summarise(ANSWERS)
    assert (row.runs, row.examples) == (3, 4)
    # micro: 0.75, 0.25, 0.75 → mean 7/12; deviations 1/6, -1/3, 1/6 → var (1/36+1/9+1/36)/2 = 1/12.
    assert row.micro_mean == pytest.approx(7 / 12)
    assert row.micro_sd == pytest.approx(math.sqrt(1 / 12))
    # macro: 5/6, 1/6, 1/2 → mean 1/2; deviations 1/3, -1/3, 0 → var (2/9)/2 = 1/9.
    assert row.macro_mean == pytest.approx(0.5)
    assert row.macro_sd == pytest.approx(1 / 3)


def test_one_run_has_sd_zero_and_languages_are_separate():
    rows = metrics.summarise([G("m", 0, 1, 1, True), G("m", 0, 2, 3, False, language="lv")])
    assert [(r.language, r.micro_mean, r.micro_sd) for r in rows] == [
        ("es", 1.0, 0.0),
        ("lv", 0.0, 0.0),
    ]


def test_per_concept_accuracy_pools_the_runs():
    rows = {(r.entry, r.concept): (r.answers, r.correct) for r in metrics.per_concept(ANSWERS)}
    assert rows == {("m", 1): (9, 6), ("m", 2): (3, 1)}


def test_position_bias_counts_chosen_positions_by_number_of_options():
    bias = metrics.position_bias(ANSWERS)
    # Two options: positions 0,1,0, 1,(none),1, 0,0,1 → 4 and 4.
    assert bias[("m", 2)] == [4, 4]
    assert bias[("m", 3)] == [1, 0, 2]
    assert metrics.position_bias([G("nmt", 0, 1, 1, True, None, options=0)]) == {}


def test_the_frequency_baseline_picks_the_most_frequent_variation_first_listed_on_ties():
    examples = [(1, 10, "es", 100), (2, 10, "es", 101), (3, 20, "es", 200), (4, 20, "es", 201)]
    counts = {10: [(100, 70), (101, 30)], 20: [(200, 50), (201, 50)]}
    records = metrics.frequency_baseline(examples, counts)
    assert [r.correct for r in records] == [True, False, True, False]
    (row,) = metrics.summarise(records)
    assert (row.micro_mean, row.macro_mean, row.micro_sd) == (0.5, 0.5, 0.0)


# --- Charts ------------------------------------------------------------------------------------


def test_the_fig_2_chart_draws_one_panel_per_language_with_error_bars():
    panels = [
        charts.Panel("es", [charts.Bar("gpt", "none", "no rules", 0.6, 0.05),
                            charts.Bar("gpt", "self", "self-generated rules", 0.7, 0.02),
                            charts.Bar("nllb", "translate", "NMT", 0.65, 0.0)], 0.55),
        charts.Panel("lv", [charts.Bar("gpt", "none", "no rules", 0.4, 0.1)], None),
    ]  # fmt: skip
    svg = charts.accuracy_chart_svg(panels).decode()
    assert svg.startswith("<?xml") and "</svg>" in svg
    for text in ("es", "lv", "no rules", "self-generated rules", "NMT", "frequency baseline"):
        assert f">{text}<" in svg or text in svg
    assert "no answers yet" in charts.accuracy_chart_svg([]).decode()


def test_the_position_bias_chart_names_each_position():
    svg = charts.position_bias_svg(3, [("gpt:none", [5, 3, 2])]).decode()
    assert "position 3" in svg and "Concepts with 3 variations" in svg
