"""Object uids (harness/apiserver/server.py ``new_uid``): random version 4 UUIDs as the apiserver gives,
unique, also across a fork."""

from __future__ import annotations

import os
import uuid

import pytest

from harness.apiserver.server import new_uid
from harness.world.world import World


def test_a_uid_is_a_canonical_version_4_uuid() -> None:
    for _ in range(20_000):
        uid = new_uid()
        parsed = uuid.UUID(uid)
        assert (parsed.version, parsed.variant) == (4, uuid.RFC_4122)
        assert str(parsed) == uid  # lower-case hex, dashes where uuid4's are


def test_uids_do_not_repeat_and_use_every_random_bit() -> None:
    uids = [uuid.UUID(new_uid()).int for _ in range(20_000)]
    assert len(set(uids)) == len(uids)
    # The 122 bits version 4 leaves random each take both values.
    fixed = (0xF000 << 64) | (0xC000 << 48)
    ones = 0
    zeros = 0
    for value in uids:
        ones |= value
        zeros |= ~value & ((1 << 128) - 1)
    assert (ones & ~fixed) == (zeros & ~fixed) == ((1 << 128) - 1) & ~fixed


def test_created_objects_get_distinct_uids() -> None:
    client = World().client()
    uids = {client.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"c{i}",
                                                                                "namespace": "default"}})
            ["metadata"]["uid"] for i in range(50)}
    assert len(uids) == 50 and all(uuid.UUID(u).version == 4 for u in uids)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_a_forked_process_draws_other_uids_than_its_parent() -> None:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its next uid, then out at once
        os.write(write, new_uid().encode())
        os._exit(0)
    os.close(write)
    child = os.read(read, 64).decode()
    os.close(read)
    os.waitpid(pid, 0)
    assert uuid.UUID(child).version == 4
    assert child != new_uid()
