"""The language-requirement rules (annotation/languages.py), without a database."""

from __future__ import annotations

import pytest

from annotation import languages


@pytest.mark.parametrize(
    ("raw", "standard"),
    [("fa", "fa"), ("FA", "fa"), ("pt-br", "pt-BR"), ("PT-BR", "pt-BR"), ("zh-hans", "zh-Hans"),
     ("iw", "he"), (" ja ", "ja")],
)  # fmt: skip
def test_codes_are_kept_in_their_standard_form(raw, standard):
    assert languages.clean_language_code(raw) == standard


@pytest.mark.parametrize("bad", ["", "Farsi", "x", "xx-", "xx", "en_US", "a" * 20])
def test_bad_codes_are_refused_with_the_code_named(bad):
    with pytest.raises(ValueError, match="language code"):
        languages.clean_language_code(bad)


def test_a_code_list_drops_duplicates_and_names_the_bad_entry():
    assert languages.clean_language_codes(["fa", "FA", "pt-BR"]) == ["fa", "pt-BR"]
    with pytest.raises(ValueError, match="'Farsi'"):
        languages.clean_language_codes(["fa", "Farsi"])
    with pytest.raises(ValueError, match="must be a list"):
        languages.clean_language_codes("fa")
    with pytest.raises(ValueError, match="not a language code: 3"):
        languages.clean_language_codes([3])


@pytest.mark.parametrize(
    ("required", "declared", "met"),
    [
        ("fa", "fa", True),
        ("fa", "FA", True),
        ("fa", "ja", False),
        ("pt", "pt-BR", True),  # a bare requirement accepts every variety
        ("pt", "pt-PT", True),
        ("pt-BR", "pt-br", True),
        ("pt-BR", "pt", False),  # "pt" does not say which variety
        ("pt-BR", "pt-PT", False),
        ("pt", "ptx", False),  # a prefix of the code is not the language
        ("he", "iw", True),  # aliases compare by their standard form
        ("fa", "Farsi", False),  # a name is not a code
    ],
)
def test_meets(required, declared, met):
    assert languages.meets(required, declared) is met


def test_no_requirement_lets_anyone_in():
    assert languages.native_problem([], "") is None
    assert languages.native_problem([], "Klingon") is None
    assert languages.working_problem([], "", []) is None


def test_native_problem_names_the_requirement_and_what_was_given():
    assert languages.native_problem(["fa", "ja"], "de") == (
        "This campaign is for native speakers of fa or ja; you gave de as your native language."
    )
    assert languages.native_problem(["fa"], "Farsi") == (
        "This campaign is for native speakers of fa. Give your native language as a language "
        "code such as fa (you gave 'Farsi')."
    )
    assert languages.native_problem(["fa"], "") == (
        "This campaign is for native speakers of fa; give your native language."
    )


def test_bilingual_natives_meet_either_requirement():
    assert languages.native_problem(["hi"], "en, hi") is None
    assert languages.native_problem(["hi"], "en; HI") is None


def test_working_languages_are_all_needed_and_a_native_language_counts():
    assert languages.working_problem(["en"], "fa", ["en", "fr"]) is None
    assert languages.working_problem(["en"], "en", []) is None
    assert languages.working_problem(["en", "fr"], "fa", ["English", "fr"]) == (
        "This campaign needs annotators who also work in en and fr; en is not among your "
        "languages (give them as codes, e.g. en)."
    )


def test_describe():
    assert languages.describe([], []) == ""
    assert languages.describe(["fa"], ["en"]) == (
        "Native speakers of Persian (fa) who also work in English (en)."
    )
    assert languages.describe(["pt-BR", "pt-PT"], []) == (
        "Native speakers of Portuguese (Brazil) (pt-BR) or Portuguese (Portugal) (pt-PT)."
    )


def test_language_names_fall_back_to_the_code():
    assert languages.language_name("ja") == "Japanese (ja)"
    assert languages.language_name("qaa") == "qaa"  # a private-use code has no name
