import numpy as np
import pytest

from search.topics.trees import (
    TopicTreeError,
    jaccard,
    keywords_of,
    neighbour_lists,
    parse_generated_tree,
    parse_tree,
)


def test_nested_tree_becomes_depth_first_specs_with_parents_first():
    specs = parse_tree({"Law": {"Criminal law": {"Prison vs jail": {}}, "Tax law": {}}})

    assert [(s.name, s.parent, s.depth) for s in specs] == [
        ("Law", None, 0),
        ("Criminal law", 0, 1),
        ("Prison vs jail", 1, 2),
        ("Tax law", 0, 1),
    ]


def test_flat_list_gives_roots_and_lists_of_leaves_are_accepted():
    assert [s.parent for s in parse_tree(["A topic", "Another topic"])] == [None, None]
    specs = parse_tree({"Music": ["Baroque harpsichord", "Jazz harmony"]})
    assert [(s.name, s.parent) for s in specs] == [
        ("Music", None),
        ("Baroque harpsichord", 0),
        ("Jazz harmony", 0),
    ]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({}, "empty"),
        ("text", "a JSON object"),
        ({"Law": {"": {}}}, "empty topic name at 'Law > '"),
        ({"Law": 5}, "children of 'Law' must be"),
        ([1], "must be text"),
    ],
)
def test_bad_trees_are_refused_with_the_place(data, message):
    with pytest.raises(TopicTreeError, match=message):
        parse_tree(data)


def test_keywords_drop_function_words_and_case():
    assert keywords_of("Incarceration: Prison vs. Jail") == {"incarceration", "prison", "jail"}


def test_jaccard():
    assert jaccard(frozenset({"a", "b"}), frozenset({"b", "c"})) == pytest.approx(1 / 3)
    assert jaccard(frozenset(), frozenset()) == 0.0


def test_generated_tree_is_parsed_from_a_code_block_with_python_quotes():
    answer = "Here you go:\n```python\n{'Welding': {'Gas welding': {}, 'Arc welding': {}}}\n```"

    specs = parse_generated_tree(answer)

    assert [s.name for s in specs] == ["Welding", "Gas welding", "Arc welding"]


def test_generated_tree_never_evaluates_code():
    with pytest.raises(TopicTreeError):
        parse_generated_tree("{'a': __import__('os').system('true')}")


def test_neighbours_are_topics_sharing_keywords_best_first():
    keywords = [
        keywords_of("gas welding"),
        keywords_of("oxygen gas welding"),
        keywords_of("baroque harpsichord"),
        keywords_of("arc welding"),
    ]

    indptr, indices, sims = neighbour_lists(keywords)

    first = indices[indptr[0] : indptr[1]].tolist()
    assert first == [1, 3]
    np.testing.assert_allclose(sims[indptr[0] : indptr[1]], [2 / 3, 1 / 3])
    assert indptr[3] - indptr[2] == 0
