"""The API objects a pod (or a PersistentVolume) references by name, as the node authorizer's
graph and NodeRestriction read them (pkg/api/v1/pod VisitPodSecretNames,
VisitPodConfigmapNames; pkg/api/v1/persistentvolume VisitPVSecretNames), and the claim
requests a container picks.

Every function takes the wire-shaped object and yields names in spec order, skipping empty and
non-string ones; malformed parts (a volume that is not an object) are ignored, as validation
rejects them before they are stored.
"""

from __future__ import annotations

from collections.abc import Iterator

from draplane.api.meta import Obj, ObjLike

MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
"""A pod the kubelet created for a static pod (core/v1 MirrorPodAnnotationKey)."""
_CONTAINER_LISTS = ("initContainers", "containers", "ephemeralContainers")
_SECRET_REF_VOLUMES = ("cephfs", "cinder", "flexVolume", "rbd", "scaleIO", "iscsi", "storageos")
"""Volume sources whose `secretRef.name` names a secret (VisitPodSecretNames)."""
_PV_SECRET_REF_SOURCES = ("cephfs", "flexVolume", "rbd", "scaleIO", "iscsi", "storageos")
_CSI_KUBELET_SECRETS = ("nodePublishSecretRef", "nodeStageSecretRef", "nodeExpandSecretRef")
"""The CSI secrets the kubelet reads (the controller's are not kubelet-visible)."""


def _dict(value: object) -> Obj:
    return value if isinstance(value, dict) else {}


def _dicts(value: object) -> Iterator[Obj]:
    if isinstance(value, list):
        yield from (item for item in value if isinstance(item, dict))


def _name(ref: object, key: str = "name") -> Iterator[str]:
    value = _dict(ref).get(key)
    if isinstance(value, str) and value:
        yield value


def _spec(obj: Obj) -> Obj:
    return _dict(obj.get("spec"))


def _containers(pod: Obj) -> Iterator[Obj]:
    spec = _spec(pod)
    for key in _CONTAINER_LISTS:
        yield from _dicts(spec.get(key))


def _projections(volume: Obj) -> Iterator[Obj]:
    yield from _dicts(_dict(volume.get("projected")).get("sources"))


def is_mirror(pod: Obj) -> bool:
    return MIRROR_ANNOTATION in _dict(_dict(pod.get("metadata")).get("annotations"))


def secret_names(pod: Obj) -> Iterator[str]:
    """imagePullSecrets, containers' `envFrom[].secretRef` and `env[].valueFrom.secretKeyRef`,
    and the secrets of volumes (secret, projected secret, CSI, and the in-tree plugins)."""
    spec = _spec(pod)
    for ref in _dicts(spec.get("imagePullSecrets")):
        yield from _name(ref)
    for container in _containers(pod):
        for env_from in _dicts(container.get("envFrom")):
            yield from _name(env_from.get("secretRef"))
        for env in _dicts(container.get("env")):
            yield from _name(_dict(env.get("valueFrom")).get("secretKeyRef"))
    for volume in _dicts(spec.get("volumes")):
        yield from _name(volume.get("secret"), "secretName")
        yield from _name(volume.get("azureFile"), "secretName")
        for source in _SECRET_REF_VOLUMES:
            yield from _name(_dict(volume.get(source)).get("secretRef"))
        yield from _name(_dict(volume.get("csi")).get("nodePublishSecretRef"))
        for projection in _projections(volume):
            yield from _name(projection.get("secret"))


def configmap_names(pod: Obj) -> Iterator[str]:
    """Containers' `envFrom[].configMapRef` and `env[].valueFrom.configMapKeyRef`, and configMap
    and projected configMap volumes."""
    for container in _containers(pod):
        for env_from in _dicts(container.get("envFrom")):
            yield from _name(env_from.get("configMapRef"))
        for env in _dicts(container.get("env")):
            yield from _name(_dict(env.get("valueFrom")).get("configMapKeyRef"))
    for volume in _dicts(_spec(pod).get("volumes")):
        yield from _name(volume.get("configMap"))
        for projection in _projections(volume):
            yield from _name(projection.get("configMap"))


def persistent_volume_claim_names(pod: Obj, *, ephemeral: bool = True) -> Iterator[str]:
    """`persistentVolumeClaim.claimName` volumes and, with `ephemeral`, the claims of generic
    ephemeral volumes (named `<pod>-<volume>`, ephemeral.VolumeClaimName)."""
    pod_name = _dict(pod.get("metadata")).get("name")
    for volume in _dicts(_spec(pod).get("volumes")):
        yield from _name(volume.get("persistentVolumeClaim"), "claimName")
        if ephemeral and isinstance(volume.get("ephemeral"), dict):
            volume_name = volume.get("name")
            if isinstance(pod_name, str) and isinstance(volume_name, str):
                yield f"{pod_name}-{volume_name}"


def references_cluster_trust_bundle(pod: Obj) -> bool:
    return any(
        "clusterTrustBundle" in projection
        for volume in _dicts(_spec(pod).get("volumes"))
        for projection in _projections(volume)
    )


def persistent_volume_secrets(pv: Obj) -> Iterator[tuple[str, str]]:
    """(namespace, name) of the secrets the kubelet reads for a PersistentVolume: a secretRef's
    own namespace, else the bound claim's (`spec.claimRef.namespace`)."""
    spec = _spec(pv)
    claim_ns = _dict(spec.get("claimRef")).get("namespace")
    default_ns = claim_ns if isinstance(claim_ns, str) else ""

    def ref(value: object) -> Iterator[tuple[str, str]]:
        ns = _dict(value).get("namespace")
        for name in _name(value):
            yield (ns if isinstance(ns, str) and ns else default_ns), name

    azure = _dict(spec.get("azureFile"))
    for name in _name(azure, "secretName"):
        ns = azure.get("secretNamespace")
        yield (ns if isinstance(ns, str) and ns else default_ns), name
    for source in _PV_SECRET_REF_SOURCES:
        yield from ref(_dict(spec.get(source)).get("secretRef"))
    csi = _dict(spec.get("csi"))
    for key in _CSI_KUBELET_SECRETS:
        yield from ref(csi.get(key))


def container_claim_requests(container: ObjLike) -> dict[str, set[str] | None]:
    """The pod claims (spec.resourceClaims names) a container uses, each with the requests it
    picked by `resources.claims[].request` (None: every request of the claim, as an entry
    without `request` gives), in spec order."""
    picked: dict[str, set[str] | None] = {}
    resources = container.get("resources")
    refs = resources.get("claims") if isinstance(resources, dict) else None
    for ref in refs if isinstance(refs, list) else []:
        if not isinstance(ref, dict) or not isinstance(ref.get("name"), str):
            continue
        name, request = ref["name"], ref.get("request")
        before = picked.get(name, set())
        picked[name] = (
            None
            if before is None or not isinstance(request, str) or not request
            else before | {request}
        )
    return picked


def picks(requests: set[str] | None, request: str) -> bool:
    """Whether an allocation result of `request` is among `requests` (None: all); a
    subrequest's result `<request>/<subrequest>` counts for its request (kubelet's
    resourceclaim.BaseRequestRef)."""
    return requests is None or request.split("/")[0] in requests
