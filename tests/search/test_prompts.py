import json

import pytest

from search.topics.prompts import (
    ModelOutputError,
    parse_snippets,
    sampling_messages,
    topic_tree_messages,
)

WORDS_25 = " ".join(f"word{i}" for i in range(25))


def test_prompts_carry_their_version_and_parameters():
    [message] = topic_tree_messages("Law", depth=2, branching=4, language="English")
    assert message["content"].startswith("[topic-tree-v1]")
    assert "2 levels" in message["content"] and "exactly 4" in message["content"]
    [message] = sampling_messages("Prison vs jail", "English", 5)
    assert message["content"].startswith("[sampling-v1]")
    assert "extracted_snippets" in message["content"]


def test_snippets_are_validated_deduplicated_and_urls_checked():
    answer = "Sure!\n" + json.dumps(
        {
            "extracted_snippets": [
                {"text": WORDS_25, "source_url": "https://example.org/a"},
                {"text": WORDS_25.upper(), "source_url": "https://example.org/dup"},
                {"text": "too short", "source_url": "https://example.org/b"},
                {"text": WORDS_25 + " extra", "source_url": "javascript:alert(1)"},
                "not an object",
            ]
        }
    )

    snippets = parse_snippets(answer)

    assert [(s.text, s.source_url) for s in snippets] == [
        (WORDS_25, "https://example.org/a"),
        (WORDS_25 + " extra", ""),
    ]


@pytest.mark.parametrize(
    "answer", ["no json here", "{not json}", '{"snippets": []}', '["extracted_snippets"]']
)
def test_malformed_answers_raise(answer):
    with pytest.raises(ModelOutputError):
        parse_snippets(answer)
