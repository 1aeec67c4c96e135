"""LimitRanger admission through the real registry: a LimitRange's defaults (as
SetDefaults_LimitRangeItem fills them) land in new pods' containers with upstream's
`kubernetes.io/limit-ranger` annotation, and Container, Pod and PersistentVolumeClaim items
refuse what is out of bounds with upstream's 403 messages; a ResourceQuota then charges the
defaulted requests."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from draplane.api import kinds, meta, versions
from draplane.api.errors import StatusError
from draplane.api.meta import Obj
from draplane.testing.builders import make_pod
from draplane.testing.cluster import Cluster
from draplane.testing.quotabuilders import make_limit_range, make_resource_quota
from draplane.testing.storagebuilders import make_persistent_volume_claim


@pytest.fixture
def cluster_options() -> dict[str, Any]:
    return {"mode": versions.STRUCTURED}


def _pod(
    name: str, requests: dict[str, str] | None = None, limits: dict[str, str] | None = None
) -> Obj:
    pod = make_pod(name).obj()
    resources: Obj = {}
    if requests:
        resources["requests"] = requests
    if limits:
        resources["limits"] = limits
    if resources:
        pod["spec"]["containers"][0]["resources"] = resources
    return pod


async def test_limit_range_defaults_are_stored_and_applied(cluster: Cluster) -> None:
    client = cluster.client()
    limits = make_limit_range("defaults").limit(
        "Container", max={"cpu": "2"}, min={"memory": "64Mi"}
    )
    stored = await client.create(kinds.LIMIT_RANGES, limits.obj(), "default")
    assert stored["spec"]["limits"] == [
        {
            "type": "Container",
            "max": {"cpu": "2"},
            "min": {"memory": "64Mi"},
            "default": {"cpu": "2"},
            "defaultRequest": {"cpu": "2", "memory": "64Mi"},
        }
    ]

    pod = await client.create(kinds.PODS, _pod("p", requests={"cpu": "500m"}), "default")

    assert pod["spec"]["containers"][0]["resources"] == {
        "requests": {"cpu": "500m", "memory": "64Mi"},
        "limits": {"cpu": "2"},
    }
    assert meta.annotations(pod)["kubernetes.io/limit-ranger"] == (
        "LimitRanger plugin set: memory request for container ctr; cpu limit for container ctr"
    )


@dataclass(frozen=True)
class Refused:
    item: Obj
    obj: Obj
    message: str


def _item(type_: str, **fields: dict[str, str]) -> Obj:
    return {"type": type_, **fields}


REFUSED = [
    pytest.param(
        Refused(
            _item("Container", max={"cpu": "1"}),
            _pod("p", requests={"cpu": "500m"}, limits={"cpu": "3"}),
            'pods "p" is forbidden: maximum cpu usage per Container is 1, but limit is 3',
        ),
        id="container-max",
    ),
    pytest.param(
        Refused(
            _item("Container", min={"cpu": "250m"}, maxLimitRequestRatio={"memory": "2"}),
            _pod(
                "p",
                requests={"cpu": "100m", "memory": "100Mi"},
                limits={"cpu": "100m", "memory": "300Mi"},
            ),
            'pods "p" is forbidden: [minimum cpu usage per Container is 250m, but request is '
            "100m, memory max limit to request ratio per Container is 2, but provided ratio is "
            "3.000000]",
        ),
        id="container-min-and-ratio",
    ),
    pytest.param(
        Refused(
            _item("Pod", max={"memory": "1Gi"}),
            _pod("p", requests={"memory": "2Gi"}, limits={"memory": "2Gi"}),
            'pods "p" is forbidden: maximum memory usage per Pod is 1Gi, but limit is 2Gi',
        ),
        id="pod-max",
    ),
    pytest.param(
        Refused(
            _item("PersistentVolumeClaim", min={"storage": "2Gi"}),
            make_persistent_volume_claim("data").obj(),
            'persistentvolumeclaims "data" is forbidden: minimum storage usage per '
            "PersistentVolumeClaim is 2Gi, but request is 1Gi",
        ),
        id="claim-min",
    ),
]


@pytest.mark.parametrize("case", REFUSED)
async def test_out_of_bounds_is_forbidden(cluster: Cluster, case: Refused) -> None:
    client = cluster.client()
    limit_range = make_limit_range("bounds").obj()
    limit_range["spec"]["limits"] = [case.item]
    await client.create(kinds.LIMIT_RANGES, limit_range, "default")
    rt = kinds.for_kind("v1", case.obj["kind"])
    assert rt is not None

    with pytest.raises(StatusError) as err:
        await client.create(rt, case.obj, "default")

    assert err.value.code == 403
    assert err.value.message == case.message


async def test_a_quota_charges_the_defaulted_requests(cluster: Cluster) -> None:
    client = cluster.client()
    limits = make_limit_range("defaults").limit("Container", defaultRequest={"cpu": "300m"})
    await client.create(kinds.LIMIT_RANGES, limits.obj(), "default")
    quota = await client.create(
        kinds.RESOURCE_QUOTAS, make_resource_quota("q").hard("requests.cpu", "1").obj(), "default"
    )
    quota["status"] = {"hard": {"requests.cpu": "1"}, "used": {"requests.cpu": "0"}}
    await client.update(kinds.RESOURCE_QUOTAS, quota, subresource="status")

    await client.create(kinds.PODS, _pod("p"), "default")

    charged = await client.get(kinds.RESOURCE_QUOTAS, "q", "default")
    assert charged["status"]["used"] == {"requests.cpu": "300m"}


async def test_null_resources_get_the_defaults(cluster: Cluster) -> None:
    """LimitRanger runs before validation: a container's `resources: null` is an empty one."""
    client = cluster.client()
    limits = make_limit_range("defaults").limit("Container", default={"memory": "128Mi"})
    await client.create(kinds.LIMIT_RANGES, limits.obj(), "default")
    pod = make_pod("p").obj()
    pod["spec"]["containers"][0]["resources"] = None

    created = await client.create(kinds.PODS, pod, "default")

    assert created["spec"]["containers"][0]["resources"] == {
        "requests": {"memory": "128Mi"},
        "limits": {"memory": "128Mi"},
    }
