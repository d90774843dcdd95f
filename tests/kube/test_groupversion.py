"""harness.kube.groupversion: ``schema.ParseGroupVersion``."""

from __future__ import annotations

import pytest

from harness.kube.groupversion import parse_group_version


@pytest.mark.parametrize("text,parsed", [
    ("", ("", "")), ("/", ("", "")), ("v1", ("", "v1")), ("apps/v1", ("apps", "v1")),
    ("cluster.x-k8s.io/v1beta1", ("cluster.x-k8s.io", "v1beta1")),
])
def test_group_and_version_are_split_at_the_one_slash(text: str, parsed: tuple[str, str]) -> None:
    assert parse_group_version(text) == parsed


def test_more_than_one_slash_is_refused_in_upstream_words() -> None:
    with pytest.raises(ValueError, match="^unexpected GroupVersion string: a/b/c$"):
        parse_group_version("a/b/c")
