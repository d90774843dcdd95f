"""SubresourceRequest's own __init__ (its fields set in the instance's dict, not one by one through
object.__setattr__) builds what the frozen dataclass's generated one built: the same fields, defaults,
positional and keyword forms, equality, hash, repr, and it stays frozen."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from harness.apiserver.subresources.base import SubresourceRequest


@dataclasses.dataclass(frozen=True)
class _Generated:
    server: Any
    rt: Any
    namespace: str | None
    name: str
    user: str = "admin"
    dry_run: bool = False
    field_manager: str | None = None
    force: bool = False
    answer: bool = True


CALLS: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
    (("srv", "rt", "ns", "p"), {}),
    (("srv", "rt", None, "n"), {"user": "bob", "dry_run": True}),
    (("srv", "rt", "ns", "p", "u", True, "mgr", True, False), {}),
    ((), {"server": "srv", "rt": "rt", "namespace": "ns", "name": "p", "answer": False, "force": True,
          "field_manager": "m"}),
]


@pytest.mark.parametrize(("args", "kwargs"), CALLS)
def test_a_request_is_built_as_the_generated_init_built_it(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    mine, generated = SubresourceRequest(*args, **kwargs), _Generated(*args, **kwargs)
    assert dataclasses.asdict(mine) == dataclasses.asdict(generated)
    assert [f.name for f in dataclasses.fields(mine)] == [f.name for f in dataclasses.fields(generated)]
    assert repr(mine) == repr(generated).replace("_Generated", "SubresourceRequest")
    assert mine == SubresourceRequest(*args, **kwargs) and hash(mine) == hash(SubresourceRequest(*args, **kwargs))
    assert mine != dataclasses.replace(mine, name="other")
    with pytest.raises(dataclasses.FrozenInstanceError):
        mine.name = "other"  # type: ignore[misc]


def test_a_request_refuses_what_the_generated_init_refused() -> None:
    with pytest.raises(TypeError):
        SubresourceRequest("srv", "rt", "ns")  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        SubresourceRequest("srv", "rt", "ns", "p", bogus=1)  # type: ignore[call-arg]
