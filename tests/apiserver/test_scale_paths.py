"""The one `scale` mechanism at configurable paths: the Scale of an object and the object after
a Scale write, for the built-in kinds' paths (a LabelSelector at `.spec.selector`) and for a
CRD's specReplicasPath/statusReplicasPath/labelSelectorPath (a string selector), and a custom
resource scaled through the registry at nested paths of its own."""

from __future__ import annotations

from typing import Any

import pytest

from draplane.api import errors, kinds
from draplane.api.crd import ScaleSubresource
from draplane.api.kinds import ResourceType
from draplane.apiserver.strategies import scale
from draplane.apiserver.strategies.table import strategy_for
from draplane.testing.builders import make_deployment
from draplane.testing.cluster import Cluster
from draplane.testing.crds import make_crd, make_widget

NESTED = ScaleSubresource(".spec.size.count", ".status.counts.ready", ".status.selector")
WIDGETS = ResourceType("example.com", "v1", "widgets", "Widget", True, "widget")


def _obj(spec: dict[str, Any], status: dict[str, Any]) -> dict[str, Any]:
    return {
        "metadata": {"name": "o", "namespace": "default", "uid": "u1"},
        "spec": spec,
        "status": status,
    }


@pytest.mark.parametrize(
    ("paths", "obj", "spec", "status"),
    [
        pytest.param(
            scale.REPLICAS,
            _obj({"replicas": 3, "selector": {"matchLabels": {"app": "a"}}}, {"replicas": 2}),
            {"replicas": 3},
            {"replicas": 2, "selector": "app=a"},
            id="built-in-label-selector",
        ),
        pytest.param(
            scale.REPLICAS,
            _obj({"replicas": 0}, {}),
            {},
            {"replicas": 0},
            id="built-in-zero-and-no-selector-omitted",
        ),
        pytest.param(
            NESTED,
            _obj({"size": {"count": 4}}, {"counts": {"ready": 1}, "selector": "app=w,t in (x)"}),
            {"replicas": 4},
            {"replicas": 1, "selector": "app=w,t in (x)"},
            id="crd-nested-paths-string-selector",
        ),
        pytest.param(
            NESTED,
            _obj({"size": "big"}, {"counts": {"ready": "x"}}),
            {},
            {"replicas": 0},
            id="crd-paths-of-other-types-read-as-zero",
        ),
    ],
)
def test_scale_of_reads_the_kinds_paths(
    paths: ScaleSubresource, obj: dict[str, Any], spec: dict[str, Any], status: dict[str, Any]
) -> None:
    got = scale.scale_of(obj, paths)

    assert (got["kind"], got["apiVersion"]) == ("Scale", "autoscaling/v1")
    assert got["metadata"] == {"name": "o", "namespace": "default", "uid": "u1"}
    assert (got["spec"], got["status"]) == (spec, status)


@pytest.mark.parametrize(
    ("paths", "obj", "written"),
    [
        pytest.param(scale.REPLICAS, _obj({"replicas": 1}, {}), {"replicas": 5}, id="built-in"),
        pytest.param(
            NESTED,
            _obj({"size": {"count": 1, "unit": "u"}}, {}),
            {"size": {"count": 5, "unit": "u"}},
            id="crd-nested",
        ),
        pytest.param(NESTED, _obj({}, {}), {"size": {"count": 5}}, id="crd-path-created"),
    ],
)
def test_apply_scale_writes_only_the_desired_replicas(
    paths: ScaleSubresource, obj: dict[str, Any], written: dict[str, Any]
) -> None:
    new = scale.apply_scale(kinds.DEPLOYMENTS, obj, {"spec": {"replicas": 5}}, paths)

    assert new["spec"] == written
    assert new["status"] == obj["status"]


@pytest.mark.parametrize(
    ("rt", "paths"),
    [
        pytest.param(kinds.DEPLOYMENTS, scale.REPLICAS, id="deployments"),
        pytest.param(kinds.REPLICA_SETS, scale.REPLICAS, id="replicasets"),
        pytest.param(kinds.STATEFUL_SETS, scale.REPLICAS, id="statefulsets"),
        pytest.param(kinds.DAEMON_SETS, None, id="daemonsets-none"),
    ],
)
def test_built_in_kinds_declare_their_paths(
    rt: ResourceType, paths: ScaleSubresource | None
) -> None:
    assert strategy_for(rt).scale == paths
    assert ("scale" in rt.subresources) == (paths is not None)


async def test_custom_resource_scaled_at_its_crds_paths(cluster: Cluster) -> None:
    client = cluster.client()
    crd = make_crd(schema={"type": "object", "x-kubernetes-preserve-unknown-fields": True})
    crd["spec"]["versions"][0]["subresources"]["scale"] = {
        "specReplicasPath": NESTED.spec_replicas_path,
        "statusReplicasPath": NESTED.status_replicas_path,
        "labelSelectorPath": NESTED.label_selector_path,
    }
    await client.create(kinds.CUSTOM_RESOURCE_DEFINITIONS, crd)
    await client.create(WIDGETS, make_widget(size={"count": 2}))
    await client.patch(
        WIDGETS,
        "w",
        {"status": {"counts": {"ready": 2}, "selector": "app=w"}},
        "default",
        subresource="status",
    )
    await client.create(kinds.DEPLOYMENTS, make_deployment("d").replicas(2).obj())

    read = await client.get(WIDGETS, "w", "default", subresource="scale")
    scaled = await client.patch(
        WIDGETS, "w", {"spec": {"replicas": 6}}, "default", subresource="scale"
    )
    deployment = await client.patch(
        kinds.DEPLOYMENTS, "d", {"spec": {"replicas": 6}}, "default", subresource="scale"
    )
    with pytest.raises(errors.StatusError) as caught:
        await client.patch(
            WIDGETS, "w", {"spec": {"replicas": "6"}}, "default", subresource="scale"
        )

    assert (read["spec"], read["status"]) == ({"replicas": 2}, {"replicas": 2, "selector": "app=w"})
    assert scaled["spec"] == deployment["spec"] == {"replicas": 6}
    assert (caught.value.code, caught.value.message) == (
        422,
        'Scale.autoscaling "w" is invalid: spec.replicas: Invalid value: "6": must be an integer',
    )
    stored = await client.get(WIDGETS, "w", "default")
    assert stored["spec"]["size"] == {"count": 6}
    assert "replicas" not in stored["spec"]
    assert (await client.get(kinds.DEPLOYMENTS, "d", "default"))["spec"]["replicas"] == 6
