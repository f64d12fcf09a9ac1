"""``Call.facts``: the request's fact set, handed over only in a version this SDK reads."""

from hookbus.facts import FACTS_VERSION, facts_of

FACTS = {"version": FACTS_VERSION, "hook": "before_tool_call", "tools": []}


def test_facts_of_a_version_it_reads_are_handed_over_as_they_are():
    assert facts_of(FACTS) is FACTS


def test_no_unknown_or_malformed_facts_reach_a_handler():
    for value in [None, "facts", [], {}, {**FACTS, "version": 2}, {**FACTS, "tools": {}},
                  {**FACTS, "version": True}]:
        assert facts_of(value) is None, value
