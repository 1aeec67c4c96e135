"""Cluster IPs and node ports of Services, allocated at write time (pkg/registry/core/service
ipallocator and portallocator, without their bitmap objects).

The service CIDR defaults to 10.96.0.0/12; its first address is the `kubernetes` Service's.
A create gets the lowest free address (and, for NodePort and LoadBalancer Services, the lowest
free node port in 30000-32767) unless it names one, which must be in range and free. Free means
no stored Service holds it and no write in flight reserved it; a deleted Service's address is
free again. Updates keep the allocated values the client left out.
"""

from __future__ import annotations

import asyncio
import ipaddress
from typing import TYPE_CHECKING, Any

from draplane.api import errors, kinds, meta
from draplane.api.errors import FieldError
from draplane.api.meta import Obj
from draplane.clock import REAL_CLOCK, Clock

if TYPE_CHECKING:
    from draplane.storage.interface import Storage

DEFAULT_SERVICE_CIDR = "10.96.0.0/12"
NODE_PORT_RANGE = (30000, 32767)
_PENDING_SECONDS = 60.0
"""A reservation not seen in storage after this long is given up (its write failed)."""


class ServiceAllocator:
    def __init__(self, cidr: str = DEFAULT_SERVICE_CIDR, *, clock: Clock = REAL_CLOCK) -> None:
        self.network = ipaddress.ip_network(cidr, strict=False)
        self._clock = clock
        self._lock = asyncio.Lock()
        self._pending_ips: dict[str, float] = {}
        self._pending_ports: dict[int, float] = {}

    @property
    def kubernetes_ip(self) -> str:
        return str(self.network.network_address + 1)

    def _fresh(self, pending: dict[Any, float]) -> set[Any]:
        now = self._clock.monotonic()
        for key in [k for k, at in pending.items() if now - at > _PENDING_SECONDS]:
            del pending[key]
        return set(pending)

    async def assign(self, storage: Storage, obj: Obj, old: Obj | None) -> None:
        """Fill in (or check) obj's cluster IP and node ports; 422 when taken or out of range."""
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return
        if old is not None:
            keep_allocated(spec, old.get("spec") or {})
        kind = spec.get("type") or "ClusterIP"
        async with self._lock:
            items, _ = await storage.list(kinds.SERVICES.key)
            self._forget_stored(items)
            others = [s for s in items if meta.key(s) != meta.key(obj)]
            if kind == "ExternalName":
                return
            old_spec = (old or {}).get("spec") or {}
            self._assign_ip(obj, spec, others, keep=old_spec.get("clusterIP"))
            if kind in ("NodePort", "LoadBalancer"):
                self._assign_node_ports(obj, spec, others)

    def _forget_stored(self, items: list[Obj]) -> None:
        """Reservations whose Service is stored are held by the store now."""
        for item in items:
            spec = item.get("spec") or {}
            self._pending_ips.pop(spec.get("clusterIP"), None)  # type: ignore[arg-type]
            for port in spec.get("ports") or []:
                if isinstance(port, dict):
                    self._pending_ports.pop(port.get("nodePort"), None)  # type: ignore[arg-type]

    def _assign_ip(self, obj: Obj, spec: Obj, others: list[Obj], *, keep: Any) -> None:
        requested = spec.get("clusterIP") or ""
        if requested != "None" and requested != keep:
            used = {(s.get("spec") or {}).get("clusterIP") for s in others}
            used |= self._fresh(self._pending_ips)
            if requested:
                self._check_ip(obj, requested, used)
            else:
                requested = self._next_ip(used)
                if not requested:
                    raise errors.invalid_object(
                        kinds.SERVICES.kind,
                        meta.name(obj),
                        [_cause(requested, "range is full")],
                        kinds.SERVICES,
                    )
            self._pending_ips[requested] = self._clock.monotonic()
        spec["clusterIP"] = requested
        spec["clusterIPs"] = [requested]
        spec.setdefault("ipFamilies", ["IPv4"])
        spec.setdefault("ipFamilyPolicy", "SingleStack")

    def _check_ip(self, obj: Obj, ip: str, used: set[Any]) -> None:
        try:
            inside = ipaddress.ip_address(ip) in self.network
        except ValueError:
            return  # validation reports it
        if not inside:
            detail = (
                f"provided IP is not in the valid range. The range of valid IPs is {self.network}"
            )
        elif ip in used:
            detail = "provided IP is already allocated"
        else:
            return
        raise errors.invalid_object(
            kinds.SERVICES.kind, meta.name(obj), [_cause(ip, detail)], kinds.SERVICES
        )

    def _next_ip(self, used: set[Any]) -> str:
        for host in self.network.hosts():
            text = str(host)
            if text not in used and text != self.kubernetes_ip:
                return text
        return ""

    def _assign_node_ports(self, obj: Obj, spec: Obj, others: list[Obj]) -> None:
        used: set[Any] = {
            p.get("nodePort")
            for s in others
            for p in (s.get("spec") or {}).get("ports") or []
            if isinstance(p, dict)
        }
        used |= self._fresh(self._pending_ports)
        low, high = NODE_PORT_RANGE
        causes: list[FieldError] = []
        for i, port in enumerate(spec.get("ports") or []):
            if not isinstance(port, dict):
                continue
            wanted = port.get("nodePort")
            if wanted:
                if not isinstance(wanted, int) or not low <= wanted <= high:
                    causes.append(
                        errors.invalid(
                            f"spec.ports[{i}].nodePort",
                            wanted,
                            "provided port is not in the valid range. The range of valid "
                            f"ports is {low}-{high}",
                        )
                    )
                    continue
                if wanted in used:
                    causes.append(
                        errors.invalid(
                            f"spec.ports[{i}].nodePort",
                            wanted,
                            "provided port is already allocated",
                        )
                    )
                    continue
            else:
                wanted = next((n for n in range(low, high + 1) if n not in used), None)
                if wanted is None:
                    causes.append(errors.invalid(f"spec.ports[{i}].nodePort", 0, "range is full"))
                    continue
                port["nodePort"] = wanted
            used.add(wanted)
            self._pending_ports[wanted] = self._clock.monotonic()
        if causes:
            raise errors.invalid_object(kinds.SERVICES.kind, meta.name(obj), causes, kinds.SERVICES)


def _cause(ip: str, detail: str) -> FieldError:
    return errors.invalid("spec.clusterIPs[0]", ip, detail)


def keep_allocated(spec: Obj, old_spec: Obj) -> None:
    """patchAllocatedValues: an update that leaves out the cluster IP or a node port keeps it."""
    kind = spec.get("type") or "ClusterIP"
    if kind != "ExternalName" and not spec.get("clusterIP") and old_spec.get("clusterIP"):
        spec["clusterIP"] = old_spec["clusterIP"]
        spec["clusterIPs"] = old_spec.get("clusterIPs") or [old_spec["clusterIP"]]
    for key in ("ipFamilies", "ipFamilyPolicy"):
        if spec.get(key) is None and old_spec.get(key) is not None and kind != "ExternalName":
            spec[key] = old_spec[key]
    if kind in ("NodePort", "LoadBalancer"):
        old_ports = {
            (p.get("port"), p.get("protocol")): p.get("nodePort")
            for p in old_spec.get("ports") or []
            if isinstance(p, dict)
        }
        for port in spec.get("ports") or []:
            if isinstance(port, dict) and not port.get("nodePort"):
                kept = old_ports.get((port.get("port"), port.get("protocol")))
                if kept:
                    port["nodePort"] = kept
