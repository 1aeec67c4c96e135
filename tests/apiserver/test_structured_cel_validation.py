"""Device selectors compiled at API validation (validateCELSelector): DeviceClass, claim and
template selectors that do not compile, do not return bool, exceed the cost or length limit are
422s with upstream's field paths and messages; an accepted expression is compiled once, in the
cache the allocator uses; unchanged stored expressions are not compiled again on update."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from draplane.api import errors, kinds, versions
from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj
from draplane.api.validation import devicecommon
from draplane.dra.cel import SelectorCache
from draplane.testing.cluster import Cluster
from draplane.testing.structured import (
    make_device_class,
    make_structured_claim,
    make_structured_claim_template,
    make_subrequest,
)

NESTED = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"
TOO_COSTLY = f"{NESTED}.all(x, {NESTED}.all(y, {NESTED}.all(z, {NESTED}.all(w, true))))"
TOO_LONG = 'device.driver == "' + "x" * (10 * 1024) + '"'
UNDECLARED = (
    "compilation failed: ERROR: <input>:1:1: undeclared reference to 'foo' (in container '')"
)
NOT_BOOL = "must evaluate to bool or the unknown type, not int"
BOOL_INDEX = "device.attributes[true].someBoolean"
BOOL_INDEX_ERROR = (
    "compilation failed: ERROR: <input>:1:18: found no matching overload for '_[_]' applied to "
    "'(map(string, map(string, any)), bool)'\n | device.attributes[true].someBoolean\n"
    " | .................^"
)
DRIVER_NOT_BOOL = "must evaluate to bool or the unknown type, not string"
COST = "too complex, exceeds cost limit"


@pytest.fixture
def cluster_options() -> dict[str, Any]:
    return {"mode": versions.STRUCTURED}


def _selectors(expression: str) -> list[Obj]:
    return [{"cel": {"expression": expression}}]


def _class(expression: str) -> tuple[ResourceType, Obj]:
    return kinds.DEVICE_CLASSES, make_device_class("gpu").selector(expression).obj()


def _claim(expression: str) -> tuple[ResourceType, Obj]:
    claim = make_structured_claim("c").request("r", "gpu", selectors=[expression])
    return kinds.RESOURCE_CLAIMS_V1, claim.obj()


def _first_available(expression: str) -> tuple[ResourceType, Obj]:
    sub = make_subrequest("s", "gpu", selectors=[expression])
    return kinds.RESOURCE_CLAIMS_V1, make_structured_claim("c").first_available("r", sub).obj()


def _template(expression: str) -> tuple[ResourceType, Obj]:
    claim = make_structured_claim().request("r", "gpu", selectors=[expression])
    return kinds.RESOURCE_CLAIM_TEMPLATES_V1, make_structured_claim_template("t", claim=claim).obj()


CLASS_PATH = "spec.selectors[0].cel.expression"
CLAIM_PATH = "spec.devices.requests[0].exactly.selectors[0].cel.expression"
SUB_PATH = "spec.devices.requests[0].firstAvailable[0].selectors[0].cel.expression"
TEMPLATE_PATH = "spec.spec.devices.requests[0].exactly.selectors[0].cel.expression"


@pytest.mark.parametrize(
    ("build", "expression", "reason", "path", "message"),
    [
        pytest.param(
            _class, "foo", "FieldValueInvalid", CLASS_PATH, UNDECLARED, id="class-compile"
        ),
        pytest.param(
            _class, "1 + 2", "FieldValueInvalid", CLASS_PATH, NOT_BOOL, id="class-not-bool"
        ),
        pytest.param(_class, TOO_COSTLY, "FieldValueForbidden", CLASS_PATH, COST, id="class-cost"),
        pytest.param(
            _class,
            BOOL_INDEX,
            "FieldValueInvalid",
            CLASS_PATH,
            BOOL_INDEX_ERROR,
            id="class-attributes-bool-index",
        ),
        pytest.param(
            _class,
            "device.driver",
            "FieldValueInvalid",
            CLASS_PATH,
            DRIVER_NOT_BOOL,
            id="class-driver-not-bool",
        ),
        pytest.param(
            _class,
            TOO_LONG,
            "FieldValueTooLong",
            CLASS_PATH,
            "Too long: must have at most 10240 bytes",
            id="class-length",
        ),
        pytest.param(
            _claim, "foo", "FieldValueInvalid", CLAIM_PATH, UNDECLARED, id="claim-compile"
        ),
        pytest.param(
            _claim, "1 + 2", "FieldValueInvalid", CLAIM_PATH, NOT_BOOL, id="claim-not-bool"
        ),
        pytest.param(_claim, TOO_COSTLY, "FieldValueForbidden", CLAIM_PATH, COST, id="claim-cost"),
        pytest.param(
            _claim,
            BOOL_INDEX,
            "FieldValueInvalid",
            CLAIM_PATH,
            BOOL_INDEX_ERROR,
            id="claim-attributes-bool-index",
        ),
        pytest.param(
            _claim,
            "device.driver",
            "FieldValueInvalid",
            CLAIM_PATH,
            DRIVER_NOT_BOOL,
            id="claim-driver-not-bool",
        ),
        pytest.param(
            _claim,
            'device.foo == "x"',
            "FieldValueInvalid",
            CLAIM_PATH,
            "compilation failed: ERROR: <input>:1:7: undefined field 'foo'",
            id="claim-unknown-device-field",
        ),
        pytest.param(
            _first_available,
            "device.driver",
            "FieldValueInvalid",
            SUB_PATH,
            DRIVER_NOT_BOOL,
            id="subrequest-driver-not-bool",
        ),
        pytest.param(
            _first_available, "foo", "FieldValueInvalid", SUB_PATH, UNDECLARED, id="subrequest"
        ),
        pytest.param(
            _template, "foo", "FieldValueInvalid", TEMPLATE_PATH, UNDECLARED, id="template"
        ),
        pytest.param(
            _template, TOO_COSTLY, "FieldValueForbidden", TEMPLATE_PATH, COST, id="template-cost"
        ),
        pytest.param(
            _template,
            BOOL_INDEX,
            "FieldValueInvalid",
            TEMPLATE_PATH,
            BOOL_INDEX_ERROR,
            id="template-attributes-bool-index",
        ),
        pytest.param(
            _template,
            "device.driver",
            "FieldValueInvalid",
            TEMPLATE_PATH,
            DRIVER_NOT_BOOL,
            id="template-driver-not-bool",
        ),
    ],
)
async def test_bad_selectors_are_422(
    cluster: Cluster,
    build: object,
    expression: str,
    reason: str,
    path: str,
    message: str,
) -> None:
    assert callable(build)
    rt, obj = build(expression)
    client = cluster.client()

    with pytest.raises(errors.StatusError) as err:
        await client.create(rt, {"apiVersion": rt.api_version, "kind": rt.kind, **obj}, "default")

    assert err.value.code == 422
    causes = err.value.details["causes"]
    assert [(c["reason"], c["field"]) for c in causes] == [(reason, path)]
    assert message in causes[0]["message"]
    namespace = "default" if rt.namespaced else ""
    assert (await client.list(rt, namespace))["items"] == []


@pytest.mark.parametrize(
    "build",
    [
        pytest.param(_class, id="class"),
        pytest.param(_claim, id="claim"),
        pytest.param(_first_available, id="subrequest"),
        pytest.param(_template, id="template"),
    ],
)
async def test_a_good_selector_is_compiled_once_in_the_allocators_cache(
    cluster: Cluster, build: object
) -> None:
    assert callable(build)
    expression = f'device.driver == "{build.__name__}.example.com"'
    rt, obj = build(expression)
    cache = SelectorCache.shared()
    before = cache.compiler.compilations

    created = await cluster.client().create(
        rt, {"apiVersion": rt.api_version, "kind": rt.kind, **obj}, "default"
    )
    compiled = cache.compiled(expression)

    assert created["metadata"]["uid"]
    assert compiled.error is None
    assert cache.compiler.compilations == before + 1


@pytest.fixture
def without_compiler() -> Iterator[None]:
    """Writes as a server that did not compile selectors did (objects stored before)."""
    devicecommon.use_selector_compiler(None)
    yield
    from draplane.apiserver.strategies import resourcev1 as resource

    devicecommon.use_selector_compiler(resource._compile_selector)


async def test_stored_expressions_are_not_rejected_again_on_update(
    cluster: Cluster, without_compiler: None
) -> None:
    client = cluster.client()
    rt, obj = _class("foo")
    stored_class = await client.create(rt, {"apiVersion": rt.api_version, "kind": rt.kind, **obj})
    crt, cobj = _claim("foo")
    stored_claim = await client.create(
        crt, {"apiVersion": crt.api_version, "kind": crt.kind, **cobj}, "default"
    )
    from draplane.apiserver.strategies import resourcev1 as resource

    devicecommon.use_selector_compiler(resource._compile_selector)

    config = [{"opaque": {"driver": "gpu.example.com", "parameters": {"a": 1}}}]
    relabelled = await client.update(
        rt, {**stored_class, "spec": {**stored_class["spec"], "config": config}}
    )
    labels = {"labels": {"x": "y"}}
    claim_labelled = await client.update(
        crt, {**stored_claim, "metadata": {**stored_claim["metadata"], **labels}}
    )
    changed = {**relabelled, "spec": {**relabelled["spec"], "selectors": _selectors("bar")}}
    with pytest.raises(errors.StatusError) as err:
        await client.update(rt, changed)

    assert relabelled["spec"]["config"] == config
    assert claim_labelled["metadata"]["labels"] == {"x": "y"}
    assert err.value.code == 422
    assert [c["field"] for c in err.value.details["causes"]] == [CLASS_PATH]
    assert "undeclared reference to 'bar'" in err.value.details["causes"][0]["message"]
