import gzip

import pytest

from hookbus.codec import Limits, depth_exceeds, inflate
from hookbus.errors import HookbusError
from hookbus.tokens import encode_token


def test_tokens_are_encoded_like_the_typescript_sdk():
    assert encode_token("agent-7") == "agent-7"
    assert encode_token("agent.1") == "agent=2E1"
    assert encode_token("s 1") == "s=201"
    assert encode_token("ü") == "=C3=BC"
    with pytest.raises(ValueError):
        encode_token("")


def test_depth_is_scanned_outside_strings():
    assert not depth_exceeds(b'{"a":"[[[[[[[["}', 2)
    assert depth_exceeds(b'[[[1]]]', 2)
    assert not depth_exceeds(b'[[1]]', 2)
    assert not depth_exceeds(b'{"a":"\\"[[["}', 1)


def test_gunzip_stops_at_the_inflated_limit():
    bomb = gzip.compress(b" " * 100_000)
    assert inflate(gzip.compress(b"{}"), 10) == b"{}"
    with pytest.raises(HookbusError) as raised:
        inflate(bomb, 50_000)
    assert raised.value.code == "HOOKBUS_LIMIT_EXCEEDED"
    assert raised.value.details["limit"] == "maxInflatedBytes"


def test_bad_gzip_is_a_bad_message():
    with pytest.raises(HookbusError) as raised:
        inflate(b"not gzip", 100)
    assert raised.value.code == "HOOKBUS_BAD_MESSAGE"


def test_default_limits_match_docs_limits():
    limits = Limits()
    assert (limits.max_encoded_bytes, limits.max_inflated_bytes) == (1024 * 1024, 16 * 1024 * 1024)
    assert (limits.max_depth, limits.max_blob_chunks) == (64, 64)


def test_someone_elses_durable_is_refused():
    from nats.js import api

    from hookbus.observer import Observer

    observer = Observer.__new__(Observer)
    observer.namespace, observer.hook = "ns", "after_tool_call"
    observer.durable, observer.stream = "ns_p_after_tool_call", "NS_LOG"
    mine = api.ConsumerConfig(filter_subject="ns.audit.*.*.after_tool_call.observed",
                              ack_policy=api.AckPolicy.EXPLICIT,
                              deliver_policy=api.DeliverPolicy.NEW)
    observer._check_shape(mine)  # a consumer made before refusals were filed as block
    observer._check_shape(api.ConsumerConfig(filter_subject="ns.audit.*.*.after_tool_call.*",
                                             ack_policy=api.AckPolicy.EXPLICIT,
                                             deliver_policy=api.DeliverPolicy.NEW))
    for other in [
        api.ConsumerConfig(filter_subject="ns.audit.agent-1.*.after_tool_call.observed",
                           ack_policy=api.AckPolicy.EXPLICIT, deliver_policy=api.DeliverPolicy.NEW),
        api.ConsumerConfig(filter_subject="ns.audit.*.*.after_tool_call.observed",
                           ack_policy=api.AckPolicy.NONE, deliver_policy=api.DeliverPolicy.NEW),
        api.ConsumerConfig(filter_subject="ns.audit.*.*.after_tool_call.observed",
                           ack_policy=api.AckPolicy.EXPLICIT, deliver_policy=api.DeliverPolicy.ALL),
    ]:
        with pytest.raises(HookbusError) as raised:
            observer._check_shape(other)
        assert raised.value.code == "HOOKBUS_CONSUMER_MISMATCH"


def test_a_sealed_blob_opens_with_its_key_only():
    import base64
    import os

    from nacl.bindings import crypto_aead_chacha20poly1305_ietf_encrypt

    from hookbus.codec import _open_blob

    key, nonce = os.urandom(32), os.urandom(12)
    stored = crypto_aead_chacha20poly1305_ietf_encrypt(b"the body", None, nonce, key)
    ref = {"blob": "ab" * 32, "key": base64.b64encode(key).decode(), "iv": base64.b64encode(nonce).decode()}
    assert _open_blob(ref, stored) == b"the body"
    assert _open_blob({"blob": "ab" * 32}, b"plain") == b"plain"
    tampered = stored[:-1] + bytes([stored[-1] ^ 1])
    with pytest.raises(HookbusError) as raised:
        _open_blob(ref, tampered)
    assert raised.value.code == "HOOKBUS_BLOB_MISSING"
