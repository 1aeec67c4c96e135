"""Building a claim's AllocationResult from the devices the search picked (spec 3.9).

`devices.results` in allocation order; `devices.config`: each used class's configs once
(`FromClass`, `requests` naming each request or `request/subrequest` that used the class,
kubernetes#134793), then the claim's configs (`FromClaim`, with the claim's own `requests`, once
per matching request). `requests` are kept even when they name every request: clearing them is
1.37's (kubernetes#139731). `nodeSelector`: the
node itself when any device is node-local or binds to the node, else the merged single terms of
the network-attached slices, absent when all come from `allNodes` slices.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any, cast

from draplane.api import meta
from draplane.api.types import (
    AllocationResult,
    DeviceAllocationConfiguration,
    DeviceRequestAllocationResult,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
)
from draplane.dra.structured.capacity import format_quantity
from draplane.dra.structured.pools import Candidate
from draplane.dra.structured.requests import Claim, RequestData
from draplane.dra.structured.state import AllocationError

Obj = Mapping[str, Any]


class DeviceResult:
    __slots__ = ("candidate", "consumed", "request", "share_id")

    def __init__(
        self,
        request: RequestData,
        candidate: Candidate,
        share_id: str | None,
        consumed: dict[str, Fraction] | None,
    ) -> None:
        self.request = request
        self.candidate = candidate
        self.share_id = share_id
        self.consumed = consumed


def _result_entry(r: DeviceResult, binding: bool) -> DeviceRequestAllocationResult:
    driver, pool, device = r.candidate.id
    out: DeviceRequestAllocationResult = {
        "request": r.request.full_name,
        "driver": driver,
        "pool": pool,
        "device": device,
    }
    if r.request.admin_access:
        out["adminAccess"] = True
    if r.request.tolerations:
        out["tolerations"] = [t.copy() for t in r.request.tolerations]
    if binding:
        d = r.candidate.device
        if d.get("bindingConditions"):
            out["bindingConditions"] = list(d["bindingConditions"])
        if d.get("bindingFailureConditions"):
            out["bindingFailureConditions"] = list(d["bindingFailureConditions"])
    if r.share_id is not None:
        out["shareID"] = r.share_id
    if r.consumed:
        out["consumedCapacity"] = {n: format_quantity(q) for n, q in r.consumed.items()}
    return out


def build_allocation(
    ci: int,
    claim: Claim,
    devices: list[DeviceResult],
    request_data: Callable[[int, int], RequestData],
    *,
    node_name: str,
    binding: bool,
) -> AllocationResult:
    """The AllocationResult of claim `ci` from its picked `devices`; `request_data(ci, ri)` is
    the request (or the chosen subrequest) the search served, `binding` the
    DRADeviceBindingConditions switch."""
    spec_devices = (claim.get("spec") or {}).get("devices") or {}
    requests = spec_devices.get("requests") or []
    config: list[dict[str, Any]] = []
    class_ranges: dict[str, tuple[int, int]] = {}
    for ri in range(len(requests)):
        rd = request_data(ci, ri)
        rng = class_ranges.get(rd.class_name)
        if rng is not None:
            for i in range(*rng):
                config[i]["requests"].append(rd.full_name)
            continue
        begin = len(config)
        for c in (rd.device_class.get("spec") or {}).get("config") or []:
            entry = {k: v for k, v in c.items() if k != "requests"}
            config.append({"source": "FromClass", "requests": [rd.full_name], **entry})
        class_ranges[rd.class_name] = (begin, len(config))
    for c in spec_devices.get("config") or []:
        names = list(c.get("requests") or [])
        entry = {k: v for k, v in c.items() if k != "requests"}
        if not names:
            config.append({"source": "FromClaim", **entry})
            continue
        for ri, request in enumerate(requests):
            rd = request_data(ci, ri)
            if request.get("name") in names or (rd.parent and rd.full_name in names):
                config.append({"source": "FromClaim", "requests": list(names), **entry})
    allocation: AllocationResult = {
        "devices": {"results": [_result_entry(r, binding) for r in devices]}
    }
    if config:
        allocation["devices"]["config"] = cast(list[DeviceAllocationConfiguration], config)
    try:
        selector = node_selector(devices, node_name)
    except AllocationError as e:
        name = meta.metadata(claim).get("name", "")
        raise AllocationError(f"create NodeSelector for claim {name}: {e}") from None
    if selector is not None:
        allocation["nodeSelector"] = selector
    return allocation


def node_selector(devices: list[DeviceResult], node_name: str) -> NodeSelector | None:
    fields: list[NodeSelectorRequirement] = []
    exprs: list[NodeSelectorRequirement] = []
    for r in devices:
        spec = r.candidate.slice.get("spec") or {}
        source = r.candidate.device if spec.get("perDeviceNodeSelection") else spec
        if source.get("nodeName") or r.candidate.device.get("bindsToNode"):
            return {
                "nodeSelectorTerms": [
                    {
                        "matchFields": [
                            {"key": "metadata.name", "operator": "In", "values": [node_name]}
                        ]
                    }
                ]
            }
        sel = source.get("nodeSelector")
        if sel is None:
            continue
        terms = sel.get("nodeSelectorTerms") or []
        if len(terms) > 1:
            raise AllocationError(f"unsupported ResourceSlice.NodeSelector with {len(terms)} terms")
        if terms:
            _merge(terms[0].get("matchFields") or [], fields)
            _merge(terms[0].get("matchExpressions") or [], exprs)
    if not fields and not exprs:
        return None
    term: NodeSelectorTerm = {}
    if exprs:
        term["matchExpressions"] = [e.copy() for e in exprs]
    if fields:
        term["matchFields"] = [f.copy() for f in fields]
    return {"nodeSelectorTerms": [term]}


def _merge(src: list[NodeSelectorRequirement], dst: list[NodeSelectorRequirement]) -> None:
    for req in src:
        values = set(req.get("values") or [])
        if not any(
            d.get("key") == req.get("key")
            and d.get("operator") == req.get("operator")
            and set(d.get("values") or []) == values
            for d in dst
        ):
            dst.append(req)
