"""DefaultBinder: binds through the pod's `binding` subresource (POST pods/<name>/binding)."""

from __future__ import annotations

from draplane.api import errors
from draplane.api.kinds import PODS
from draplane.scheduler.framework import SUCCESS, CycleState, Handle, PluginArgs, PodInfo, Status
from draplane.scheduler.plugins import names


class DefaultBinder:
    name = names.DEFAULT_BINDER

    def __init__(self, handle: Handle) -> None:
        self._handle = handle

    async def bind(self, state: CycleState, pod_info: PodInfo, node_name: str) -> Status:
        binding = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {
                "name": pod_info.name,
                "namespace": pod_info.namespace,
                "uid": pod_info.uid,
            },
            "target": {"apiVersion": "v1", "kind": "Node", "name": node_name},
        }
        try:
            await self._handle.client.create(
                PODS, binding, pod_info.namespace, subresource="binding", name=pod_info.name
            )
        except errors.StatusError as err:
            return Status.error(str(err))
        return SUCCESS


def new(args: PluginArgs, handle: Handle) -> DefaultBinder:
    return DefaultBinder(handle)
