"""Topic-tree pages: who may see them, import and corpus upload, the lazy tree, search, topic
pages, htmx polling and per-topic statistics from pulls."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from search.models import Pull, SearchRun, TextSample, Topic, TopicTree
from search.topics.services import import_corpus, import_topic_tree
from tests.engines.factories import HeuristicEngineFactory

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}
NESTED = {
    "Law": {"Contract law": {"Indemnity clauses": {}, "Lease notices": {}}, "Tax law": {}},
    "Sport": {"Football slang": {}, "Cricket terms": {}},
}


def corpus_line(topic: str, text: str, url: str = "https://example.org/page") -> str:
    return json.dumps({"topic": topic, "text": text, "source_url": url})


@pytest.fixture
def tree(db) -> TopicTree:
    tree = import_topic_tree(NESTED, name="Law and sport")
    import_corpus(
        tree,
        "\n".join(
            [
                corpus_line("Indemnity clauses", "The supplier shall indemnify the client."),
                corpus_line("Football slang", "Top bins from thirty yards."),
            ]
        ),
    )
    return tree


def topic(tree: TopicTree, name: str) -> Topic:
    return Topic.objects.get(tree=tree, name=name)


def make_run(tree: TopicTree, name: str = "Run A") -> SearchRun:
    return SearchRun.objects.create(
        name=name,
        tree=tree,
        sampler=SearchRun.Sampler.CORPUS,
        difficulty_engine=HeuristicEngineFactory(),
        budget_pulls=100,
    )


def pull(run: SearchRun, leaf: Topic, slot: int, difficulty: float, **extra) -> Pull:
    return Pull.objects.create(
        run=run,
        round_index=0,
        slot=slot,
        arm=leaf.arm,
        topic=leaf,
        text=f"text {slot}",
        automatic_difficulty=difficulty,
        difficulty=difficulty,
        **extra,
    )


def urls(tree: TopicTree) -> list[str]:
    leaf, inner = topic(tree, "Indemnity clauses"), topic(tree, "Contract law")
    return [
        "/search/topics/",
        f"/search/topics/{tree.pk}/",
        f"/search/topics/{tree.pk}/children/?parent={inner.pk}",
        f"/search/topics/{tree.pk}/search/?q=law",
        f"/search/topics/topic/{leaf.pk}/",
        f"/search/topics/topic/{inner.pk}/",
    ]


# --- Access --------------------------------------------------------------------------------


def test_staff_see_every_page_and_partial(admin_client, tree):
    for url in urls(tree):
        partial = "children" in url or "search/" in url
        response = admin_client.get(url, **HTMX) if partial else admin_client.get(url)
        assert response.status_code == 200, url


def test_annotators_and_anonymous_users_get_nothing(client, annotator_client, tree):
    for url in urls(tree):
        response = annotator_client.get(url, **HTMX)
        assert response.status_code == 302, url
        assert "/admin/login/" in response["Location"]
        assert b"Law and sport" not in response.content
    upload = SimpleUploadedFile("t.json", b'["A"]')
    posts = [
        annotator_client.post("/search/topics/import/", {"name": "Sneaky", "file": upload}),
        annotator_client.post(f"/search/topics/{tree.pk}/corpus/", {"file": upload}),
        annotator_client.post("/search/topics/generate/", {"name": "Sneaky"}),
        annotator_client.post(f"/search/topics/{tree.pk}/retry/"),
    ]
    assert [r.status_code for r in posts] == [302, 302, 302, 302]
    assert list(TopicTree.objects.values_list("name", flat=True)) == ["Law and sport"]
    assert TextSample.objects.count() == 2
    annotator_client.logout()
    for url in urls(tree):
        assert client.get(url).status_code == 302, url


def test_the_topics_area_is_in_the_staff_navigation_only(admin_client, annotator_user, client):
    assert b'href="/search/topics/"' in admin_client.get("/search/topics/").content
    client.force_login(annotator_user)
    assert b'href="/search/topics/"' not in client.get("/").content


# --- List, import, corpus upload -----------------------------------------------------------


def test_the_list_shows_counts_in_a_constant_number_of_queries(
    admin_client, tree, django_assert_max_num_queries
):
    import_topic_tree(["One", "Two", "Three"], name="Flat one")
    import_topic_tree(["Four"], name="Flat two")

    with django_assert_max_num_queries(8):
        response = admin_client.get("/search/topics/")

    rows = {t.name: (t.n_topics, t.n_leaves, t.n_samples) for t in response.context["trees"]}
    assert rows == {"Law and sport": (8, 5, 2), "Flat one": (3, 3, 0), "Flat two": (1, 1, 0)}
    assert b"Generate with a chat engine" in response.content
    assert b"No enabled engine is configured for chat" in response.content


def test_importing_a_tree_from_the_page(admin_client):
    upload = SimpleUploadedFile("kinds.json", json.dumps(NESTED).encode())

    response = admin_client.post(
        "/search/topics/import/", {"name": "Uploaded", "language": "en", "file": upload}
    )

    tree = TopicTree.objects.get(name="Uploaded")
    assert response.status_code == 302 and response["Location"] == f"/search/topics/{tree.pk}/"
    assert (tree.n_topics, tree.source_file_name, tree.created_by.username) == (
        8,
        "kinds.json",
        "admin",
    )


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b'{"Law": ', b"not valid JSON"),
        (b'{"Law": {"Tax": 5}}', b"children of &#x27;Law &gt; Tax&#x27; must be an object"),
        (b"42", b"a topic tree is a JSON object of nested topics or a list of names"),
    ],
)
def test_a_bad_tree_upload_says_why_and_writes_nothing(admin_client, content, message):
    upload = SimpleUploadedFile("bad.json", content)

    response = admin_client.post(
        "/search/topics/import/", {"name": "Bad", "language": "en", "file": upload}
    )

    assert response.status_code == 400
    assert b"Nothing was written." in response.content and message in response.content
    assert not TopicTree.objects.exists() and not Topic.objects.exists()


def test_corpus_upload_adds_samples_and_reports_duplicates(admin_client, tree):
    lines = [
        corpus_line("Tax law", "Income is taxed where it is earned."),
        corpus_line("Law > Contract law > Lease notices", "Two months' notice in writing."),
        corpus_line("Indemnity clauses", "The supplier shall indemnify the client."),
    ]
    upload = SimpleUploadedFile("more.jsonl", "\n".join(lines).encode())

    response = admin_client.post(f"/search/topics/{tree.pk}/corpus/", {"file": upload}, follow=True)

    assert response.redirect_chain == [(f"/search/topics/{tree.pk}/", 302)]
    assert b"Added 2 samples from 3 lines (1 duplicates skipped)." in response.content
    assert TextSample.objects.filter(topic__tree=tree).count() == 4


def test_a_bad_corpus_upload_lists_the_bad_lines_and_writes_nothing(admin_client, tree):
    lines = [
        corpus_line("Tax law", "Fine."),
        corpus_line("Nowhere", "Unknown topic."),
        "{broken",
    ]
    upload = SimpleUploadedFile("bad.jsonl", "\n".join(lines).encode())

    response = admin_client.post(f"/search/topics/{tree.pk}/corpus/", {"file": upload})

    assert response.status_code == 400
    assert b"line 2: no leaf topic named &#x27;Nowhere&#x27;" in response.content
    assert b"line 3: not valid JSON" in response.content
    assert TextSample.objects.count() == 2


def test_corpus_upload_into_a_generating_tree_is_refused(admin_client):
    pending = TopicTree.objects.create(name="Pending", status=TopicTree.Status.GENERATING)
    upload = SimpleUploadedFile("c.jsonl", corpus_line("A", "B").encode())

    response = admin_client.post(f"/search/topics/{pending.pk}/corpus/", {"file": upload})

    assert response.status_code == 400 and b"it has no topics yet" in response.content


# --- Generating trees poll until they are done ---------------------------------------------


def test_a_generating_tree_polls_until_it_is_ready(admin_client):
    pending = TopicTree.objects.create(
        name="Pending",
        origin=TopicTree.Origin.GENERATED,
        status=TopicTree.Status.GENERATING,
        generation={"engine": "gen", "roots": ["Law"], "depth": 2, "branching": 3},
    )
    row_url = f"/search/topics/?tree={pending.pk}"
    status_headers = HTMX | {"HTTP_HX_TARGET": "tree-status"}

    list_page = admin_client.get("/search/topics/")
    row_while_generating = admin_client.get(row_url, **HTMX)
    page = admin_client.get(f"/search/topics/{pending.pk}/")
    status_while_generating = admin_client.get(f"/search/topics/{pending.pk}/", **status_headers)
    TopicTree.objects.filter(pk=pending.pk).update(status=TopicTree.Status.FAILED, error="boom")
    row_when_failed = admin_client.get(row_url, **HTMX)
    status_when_failed = admin_client.get(f"/search/topics/{pending.pk}/", **status_headers)

    assert f'hx-get="/search/topics/?tree={pending.pk}"'.encode() in list_page.content
    assert row_while_generating.status_code == 200
    assert b'hx-trigger="every 2s"' in row_while_generating.content
    assert b"generating" in row_while_generating.content
    assert b"Generating topics for Law" in page.content and b'id="tree-status"' in page.content
    assert status_while_generating.status_code == 200
    assert b'hx-trigger="every 2s"' in status_while_generating.content
    assert row_when_failed.status_code == 286  # htmx stops polling
    assert b"failed" in row_when_failed.content and b"hx-trigger" not in row_when_failed.content
    assert status_when_failed["HX-Refresh"] == "true"
    failed_page = admin_client.get(f"/search/topics/{pending.pk}/")
    assert b"Generation failed." in failed_page.content and b"boom" in failed_page.content
    assert b"Try again" in failed_page.content


# --- The tree: roots, lazy children, search ------------------------------------------------


def test_the_tree_page_renders_roots_only_and_children_load_lazily(admin_client, tree):
    contract = topic(tree, "Contract law")

    page = admin_client.get(f"/search/topics/{tree.pk}/")
    law_children = admin_client.get(
        f"/search/topics/{tree.pk}/children/?parent={topic(tree, 'Law').pk}", **HTMX
    )
    contract_children = admin_client.get(
        f"/search/topics/{tree.pk}/children/?parent={contract.pk}", **HTMX
    )

    assert b">Law<" in page.content and b">Sport<" in page.content
    assert b"Contract law" not in page.content  # below a root: loaded when opened
    assert f'hx-get="/search/topics/{tree.pk}/children/?parent={contract.pk}"'.encode() not in (
        page.content
    )
    assert b'hx-trigger="toggle once"' in page.content
    assert b"Contract law" in law_children.content and b"Tax law" in law_children.content
    assert b"Indemnity clauses" not in law_children.content
    assert b"<html" not in law_children.content  # a partial
    assert b"Indemnity clauses" in contract_children.content
    assert f'href="/search/topics/topic/{topic(tree, "Lease notices").pk}/"'.encode() in (
        contract_children.content
    )


def test_children_without_htmx_fall_back_to_the_topic_page(admin_client, tree):
    contract = topic(tree, "Contract law")
    response = admin_client.get(f"/search/topics/{tree.pk}/children/?parent={contract.pk}")
    assert response.status_code == 302
    assert response["Location"] == f"/search/topics/topic/{contract.pk}/"


def test_a_topic_of_another_tree_is_not_a_child_here(admin_client, tree):
    other = import_topic_tree({"Else": ["Elsewhere"]}, name="Other")
    else_topic = Topic.objects.get(tree=other, name="Else")
    url = f"/search/topics/{tree.pk}/children/?parent={else_topic.pk}"
    assert admin_client.get(url, **HTMX).status_code == 404


def test_big_levels_come_a_page_at_a_time(admin_client):
    flat = import_topic_tree([f"Topic {i:03d}" for i in range(120)], name="Big flat")

    page = admin_client.get(f"/search/topics/{flat.pk}/")
    third = admin_client.get(f"/search/topics/{flat.pk}/children/?page=3", **HTMX)

    assert b"Topic 049" in page.content and b"Topic 050" not in page.content
    assert b"Show more (50 of 120 shown)" in page.content
    assert f'hx-get="/search/topics/{flat.pk}/children/?page=2"'.encode() in page.content
    assert b"Topic 100" in third.content and b"Topic 119" in third.content
    assert b"Topic 099" not in third.content and b"Show more" not in third.content


def test_search_matches_every_word_of_the_path_and_paginates(admin_client, tree):
    flat = import_topic_tree([f"Harbour law {i:02d}" for i in range(30)] + ["Poetry"], name="F")

    matches = admin_client.get(f"/search/topics/{tree.pk}/search/?q=LAW+contract", **HTMX)
    nothing = admin_client.get(f"/search/topics/{tree.pk}/search/?q=zebra", **HTMX)
    second = admin_client.get(f"/search/topics/{flat.pk}/search/?q=harbour&page=2", **HTMX)
    fallback = admin_client.get(f"/search/topics/{tree.pk}/?q=cricket")

    found = [t.path for t in matches.context["search"]["matches"]]
    assert found == [
        "Law > Contract law",
        "Law > Contract law > Indemnity clauses",
        "Law > Contract law > Lease notices",
    ]
    assert b"No topic matches" in nothing.content
    assert [t.name for t in second.context["search"]["matches"]] == [
        f"Harbour law {i:02d}" for i in range(25, 30)
    ]
    assert b"page 2 of 2 (30 topics)" in second.content
    assert b"Sport &gt; Cricket terms" in fallback.content  # the search form without htmx


# --- Statistics from pulls -----------------------------------------------------------------


def test_statistics_appear_once_runs_pulled_topics_and_follow_the_run_select(admin_client, tree):
    indemnity, lease = topic(tree, "Indemnity clauses"), topic(tree, "Lease notices")
    football = topic(tree, "Football slang")
    first, second = make_run(tree, "First"), make_run(tree, "Second")
    pull(first, indemnity, 0, 40.0)
    pull(first, indemnity, 1, 70.0)
    pull(first, lease, 2, 10.0)
    pull(second, football, 0, 90.0, human_difficulty=80.0)

    before = admin_client.get(f"/search/topics/{import_topic_tree(['X'], name='U').pk}/")
    page = admin_client.get(f"/search/topics/{tree.pk}/")
    only_second = admin_client.get(f"/search/topics/{tree.pk}/?run={second.pk}")
    contract = topic(tree, "Contract law")
    children = admin_client.get(
        f"/search/topics/{tree.pk}/children/?parent={contract.pk}&run={first.pk}", **HTMX
    )
    not_this_tree = admin_client.get(f"/search/topics/{tree.pk}/?run=999999")

    assert b"No search run has pulled a topic of this tree" in before.content
    assert page.context["totals"] == {"pulls": 4, "leaves": 3, "mean": 52.5}
    law_stats = {n.name: n.stats for n in page.context["nodes"]}
    assert (law_stats["Law"].pulls, law_stats["Law"].pulled_leaves) == (3, 2)
    assert law_stats["Law"].mean_difficulty == pytest.approx(40.0)
    assert (law_stats["Sport"].pulls, law_stats["Sport"].mean_difficulty) == (1, 90.0)
    assert b"2 leaves pulled \xc2\xb7 3 pulls \xc2\xb7 mean 40.0" in page.content
    assert [row["path"] for row in page.context["hardest"]] == [
        "Sport > Football slang",
        "Law > Contract law > Indemnity clauses",
        "Law > Contract law > Lease notices",
    ]
    assert only_second.context["totals"] == {"pulls": 1, "leaves": 1, "mean": 90.0}
    assert only_second.context["nodes"][0].stats is None  # Law: not pulled in this run
    assert b'<option value="%d" selected>' % second.pk in only_second.content
    law = topic(tree, "Law")
    assert f"?parent={law.pk}&run={second.pk}".encode() in only_second.content  # kept on expand
    leaf_stats = {n.name: n.stats for n in children.context["nodes"]}
    assert (leaf_stats["Indemnity clauses"].pulls, leaf_stats["Lease notices"].pulls) == (2, 1)
    assert leaf_stats["Indemnity clauses"].mean_difficulty == pytest.approx(55.0)
    assert leaf_stats["Indemnity clauses"].pulled_leaves is None
    assert b"2 pulls \xc2\xb7 mean 55.0" in children.content
    assert not_this_tree.context["run"] is None and not_this_tree.context["totals"]["pulls"] == 4


def test_statistics_of_nested_matches_and_of_leaves_between_inner_siblings(admin_client, tree):
    mixed = import_topic_tree({"A": ["A1", "A2"], "L": {}, "B": ["B1"]}, name="Mixed")
    run = make_run(mixed)
    for slot, (name, difficulty) in enumerate([("A1", 10.0), ("L", 50.0), ("B1", 90.0)]):
        pull(run, topic(mixed, name), slot, difficulty)
    indemnity, lease = topic(tree, "Indemnity clauses"), topic(tree, "Lease notices")
    law_run = make_run(tree, "Law run")
    pull(law_run, indemnity, 0, 20.0)
    pull(law_run, lease, 1, 40.0)

    roots = admin_client.get(f"/search/topics/{mixed.pk}/")
    matches = admin_client.get(f"/search/topics/{tree.pk}/search/?q=law", **HTMX)

    by_name = {n.name: n.stats for n in roots.context["nodes"]}
    assert (by_name["A"].pulls, by_name["A"].mean_difficulty, by_name["A"].pulled_leaves) == (
        1,
        10.0,
        1,
    )
    assert (by_name["L"].pulls, by_name["L"].pulled_leaves) == (1, None)
    assert (by_name["B"].pulls, by_name["B"].mean_difficulty) == (1, 90.0)  # L is not in B
    nested = {t.name: t.stats for t in matches.context["search"]["matches"]}
    assert (nested["Law"].pulls, nested["Contract law"].pulls) == (2, 2)
    assert nested["Law"].mean_difficulty == nested["Contract law"].mean_difficulty == 30.0
    assert nested["Tax law"] is None


def test_statistics_cost_the_same_queries_for_any_number_of_topics(
    admin_client, django_assert_max_num_queries
):
    wide = import_topic_tree({"Root": {f"Group {g}": [f"Leaf {g}-{i}" for i in range(8)]
                                       for g in range(40)}}, name="Wide")  # fmt: skip
    run = make_run(wide)
    for slot, leaf in enumerate(Topic.objects.filter(tree=wide, arm__isnull=False)[:200]):
        pull(run, leaf, slot, float(slot % 100))
    root = Topic.objects.get(tree=wide, name="Root")
    group = Topic.objects.get(tree=wide, name="Group 3")

    with django_assert_max_num_queries(8):
        groups = admin_client.get(f"/search/topics/{wide.pk}/children/?parent={root.pk}", **HTMX)
    with django_assert_max_num_queries(8):
        leaves = admin_client.get(f"/search/topics/{wide.pk}/children/?parent={group.pk}", **HTMX)

    stats = {n.name: n.stats for n in groups.context["nodes"]}
    assert len(stats) == 40 and stats["Group 0"].pulled_leaves == 8
    assert stats["Group 30"] is None  # 200 pulls covered the first 25 groups
    assert all(n.stats.pulls == 1 for n in leaves.context["nodes"])


# --- Topic page ----------------------------------------------------------------------------


def test_the_topic_page_shows_path_keywords_samples_and_pulls(admin_client, tree):
    leaf = topic(tree, "Indemnity clauses")
    run = make_run(tree, "Legal run")
    for slot in range(25):
        pull(run, leaf, slot, 30.0 + slot, human_difficulty=50.0 if slot == 0 else None)

    response = admin_client.get(f"/search/topics/topic/{leaf.pk}/")
    second_page = admin_client.get(f"/search/topics/topic/{leaf.pk}/?section=pulls&pulls=2", **HTMX)

    content = response.content.decode()
    assert "Law &gt; Contract law &gt; Indemnity clauses" in content
    assert '<span class="badge">clauses</span>' in content
    assert "The supplier shall indemnify the client." in content
    assert '<a href="https://example.org/page" rel="noopener noreferrer" target="_blank"' in content
    assert "Imported corpus" in content
    assert response.context["pulls"].paginator.count == 25
    assert "Legal run" in content and "page 1 of 2" in content
    assert response.context["by_run"][0]["pulls"] == 25
    assert response.context["by_run"][0]["human"] == 1
    assert second_page.status_code == 200 and "<html" not in second_page.content.decode()
    assert "text 20" in second_page.content.decode() and "text 24" in second_page.content.decode()
    assert "text 19" not in second_page.content.decode()
    # Breadcrumb through the ancestors, each a link.
    law, contract = topic(tree, "Law"), topic(tree, "Contract law")
    assert f'<a href="/search/topics/topic/{law.pk}/">Law</a>' in content
    assert f'<a href="/search/topics/topic/{contract.pk}/">Contract law</a>' in content


def test_an_inner_topic_page_lists_its_subtopics(admin_client, tree):
    contract = topic(tree, "Contract law")
    response = admin_client.get(f"/search/topics/topic/{contract.pk}/")
    assert [n.name for n in response.context["children"]] == [
        "Indemnity clauses",
        "Lease notices",
    ]
    assert b"Samples and pulls belong to leaves" in response.content
    assert b'id="samples"' not in response.content


def test_user_and_model_text_is_escaped_everywhere(admin_client):
    evil = '<script>alert("x")</script>'
    tree = import_topic_tree({f"Root {evil}": [f"Leaf {evil}"]}, name=f"Tree {evil}")
    import_corpus(
        tree,
        corpus_line(f"Leaf {evil}", f"Text {evil}", url='https://example.org/"onmouseover="x'),
    )
    leaf = Topic.objects.get(tree=tree, arm=0)
    run = make_run(tree, f"Run {evil}")
    pull(run, leaf, 0, 50.0)

    pages = [
        admin_client.get("/search/topics/"),
        admin_client.get(f"/search/topics/{tree.pk}/"),
        admin_client.get(f"/search/topics/{tree.pk}/search/?q=leaf", **HTMX),
        admin_client.get(f"/search/topics/topic/{leaf.pk}/"),
    ]

    for response in pages:
        assert response.status_code == 200
        assert b"<script>alert" not in response.content
    assert b"&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in pages[3].content
    assert b'"onmouseover=' not in pages[3].content
