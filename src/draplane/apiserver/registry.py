"""The registry: the API server's one entry, `handle(user, request)`, over storage.

Request path: authorize (system:masters, the Node authorizer, RBAC; 403 otherwise) -> the verb:
reads from the watch cache and the store, writes through `Writer` (mutating admission ->
strategy -> validation -> validating admission -> storage) and `Deleter`. The audit wraps the
entry once. The node graph and RBAC's index follow the store's change stream through the watch
cache.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from typing import Any

from draplane.api import conversion, errors, kinds, meta, validation, versions
from draplane.api.auth import SYSTEM_NODES, UserInfo
from draplane.api.catalog import Catalog
from draplane.api.handler import WatchStream
from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj
from draplane.api.patch import patch_object
from draplane.api.request import Request
from draplane.api.selectors import FieldSelector
from draplane.api.validation.scheduling import SYSTEM_PRIORITY_CLASSES
from draplane.apiserver import listoptions, nodegraph, reads
from draplane.apiserver.admission import AdmissionAttributes, Chain
from draplane.apiserver.admission.limitranger import LimitRanger
from draplane.apiserver.admission.namespacelifecycle import NamespaceLifecycle
from draplane.apiserver.admission.noderestriction import NodeRestriction
from draplane.apiserver.admission.resourcequota import ResourceQuotaAdmission
from draplane.apiserver.admission.serviceaccount import ServiceAccountAdmission
from draplane.apiserver.audit import Audit, AuditLog
from draplane.apiserver.authentication.bearer import BearerAuthenticator
from draplane.apiserver.authentication.satokens import TokenIssuer
from draplane.apiserver.authorization import (
    Attributes,
    Authorizer,
    Decision,
    Result,
    RuleResolver,
    policy,
)
from draplane.apiserver.customresources import CustomResources
from draplane.apiserver.deletion import Deleter
from draplane.apiserver.listing import ListSource, list_envelope
from draplane.apiserver.nodegraph import NodeGraph
from draplane.apiserver.serviceips import DEFAULT_SERVICE_CIDR, ServiceAllocator
from draplane.apiserver.storageerrors import to_status
from draplane.apiserver.strategies import scale
from draplane.apiserver.strategies.table import strategy_for
from draplane.apiserver.watchcache import WatchCache
from draplane.apiserver.writes import Writer
from draplane.clock import REAL_CLOCK, Clock, format_micro_time
from draplane.storage.errors import KeyNotFound, RevisionConflict, StorageError
from draplane.storage.interface import Storage

log = logging.getLogger(__name__)

_STARTUP_ATTEMPTS = 10
_STARTUP_RETRY_SECONDS = 0.05
DEFAULT_NAMESPACES = ("default", "kube-system", "kube-node-lease", "kube-public")
_DELETE_CONFLICT_RETRIES = 1000
_GRAPH_WAIT = 3.0
_COMMIT_WAIT = 1.0


class Registry:
    def __init__(
        self,
        storage: Storage,
        *,
        clock: Clock = REAL_CLOCK,
        authorizer: Authorizer | None = None,
        mode: versions.Mode,
        service_cidr: str = DEFAULT_SERVICE_CIDR,
    ) -> None:
        self.storage = storage
        self.clock = clock
        self.node_graph = NodeGraph()
        self.kinds = Catalog(mode)
        """The served kinds: built-in and the custom resources of established CRDs."""
        self.custom_resources = CustomResources(self)
        self._watch_cache = WatchCache(storage)
        self._watch_cache.add_observer(self.node_graph.observe)
        self._watch_cache.add_observer(self.custom_resources.observe)
        self.lists = ListSource(storage, self._watch_cache)
        service_accounts = ServiceAccountAdmission(storage)
        limit_ranger = LimitRanger(storage)
        self.admission = Chain(
            mutating=[NamespaceLifecycle(storage), limit_ranger, service_accounts],
            validating=[
                service_accounts,
                NodeRestriction(storage),
                limit_ranger,
                ResourceQuotaAdmission(storage, mode=mode, clock=clock),
            ],
        )
        union, node, self.rbac = policy.build(self.node_graph)
        self._watch_cache.add_observer(self.rbac.observe)
        self.authorizer: Authorizer = authorizer or union
        """The union of system:masters, the Node authorizer and RBAC; tests may swap it."""
        self.rule_resolvers: list[RuleResolver] = [node, self.rbac]
        self.writer = Writer(self)
        self.deleter = Deleter(self)
        self.audit = Audit()
        self.token_authenticator: BearerAuthenticator | None = None
        """What TokenReview asks (set by the API server at start)."""
        self.token_issuer: TokenIssuer | None = None
        """Signs the tokens of `serviceaccounts/token` (set by the API server at start)."""
        self.audit_log: AuditLog | None = None
        """Set for `--audit-log-path`: every request is logged."""
        self.service_ips = ServiceAllocator(service_cidr, clock=clock)
        """Cluster IPs and node ports of Services (`--service-cluster-ip-range`)."""

    @property
    def watch_cache(self) -> WatchCache:
        return self._watch_cache

    @watch_cache.setter
    def watch_cache(self, cache: WatchCache) -> None:
        cache.add_observer(self.node_graph.observe)
        cache.add_observer(self.custom_resources.observe)
        cache.add_observer(self.rbac.observe)
        self._watch_cache = cache
        self.lists = ListSource(self.storage, cache, self.lists.fresh_timeout)

    async def start(self) -> None:
        # The graph starts from the pods stored now and follows the change stream from the
        # same revision (neither call suspends between the two).
        pods, _ = await self.storage.list(kinds.PODS.key)
        slices, _ = await self.storage.list(kinds.RESOURCE_SLICES.key)
        pvs, _ = await self.storage.list(nodegraph.PV)
        self.node_graph.load(pods, slices, pvs)
        await policy.load_index(self.storage, self.rbac)
        await self.custom_resources.load()
        await self.watch_cache.start()
        await self._startup_writes()

    async def _startup_writes(self) -> None:
        """The default namespaces and the bootstrap RBAC reconcile. Another API server on the
        same store may run them at the same moment: a 409 (AlreadyExists, Conflict) or a 404
        from its write re-runs them on fresh reads, as kube-apiserver's post-start hooks
        retry; both are idempotent."""
        for attempt in range(_STARTUP_ATTEMPTS):
            try:
                for ns in DEFAULT_NAMESPACES:
                    if await self.storage.get(kinds.NAMESPACES.key, "", ns) is None:
                        obj: Obj = {
                            "apiVersion": "v1",
                            "kind": "Namespace",
                            "metadata": {"name": ns},
                        }
                        await self.writer.create_object(
                            _SERVER, strategy_for(kinds.NAMESPACES), "", obj, dry_run=False
                        )
                await self._system_priority_classes()
                written = await policy.reconcile_policy(
                    self._policy_get,
                    self._policy_write,
                    self._policy_delete,
                    mode=self.kinds.mode,
                )
            except (StorageError, errors.StatusError) as err:
                code = to_status(err).code if isinstance(err, StorageError) else err.code
                if code not in (404, 409) or attempt == _STARTUP_ATTEMPTS - 1:
                    raise
                log.info("start-up writes raced another API server (%s); again", err)
                await asyncio.sleep(_STARTUP_RETRY_SECONDS * (attempt + 1))
                continue
            if written:
                log.info("reconciled %d bootstrap RBAC objects", written)
            return

    async def _system_priority_classes(self) -> None:
        """system-cluster-critical and system-node-critical, as kube-apiserver's post-start
        hook creates them (kept when they exist)."""
        rt = kinds.PRIORITY_CLASSES
        for name, (value, description) in SYSTEM_PRIORITY_CLASSES.items():
            if await self.storage.get(rt.key, "", name) is None:
                obj: Obj = {
                    "apiVersion": rt.api_version,
                    "kind": rt.kind,
                    "metadata": {"name": name},
                    "value": value,
                    "description": description,
                }
                await self.writer.create_object(_SERVER, strategy_for(rt), "", obj, dry_run=False)

    async def _policy_get(self, rt: ResourceType, name: str) -> Obj | None:
        return await self.storage.get(rt.key, "", name)

    async def _policy_write(self, rt: ResourceType, new: Obj, old: Obj | None) -> None:
        strategy = strategy_for(rt)
        if old is None:
            await self.writer.create_object(_SERVER, strategy, "", new, dry_run=False)
        else:
            await self.writer.store_update(_SERVER, strategy, "", new, old)

    async def _policy_delete(self, rt: ResourceType, name: str) -> None:
        await self._delete(_SERVER, rt, "", name, None)

    async def stop(self) -> None:
        await self.custom_resources.stop()
        await self.watch_cache.stop()
        if self.audit_log is not None:
            self.audit_log.close()

    # --- the entry ---------------------------------------------------------------------

    async def handle(self, user: UserInfo, request: Request) -> Obj | WatchStream:
        served = self.kinds.lookup(request.rt.group, request.rt.version, request.rt.resource)
        if served is None:
            raise errors.StatusError(
                404, "NotFound", "the server could not find the requested resource"
            )
        if served is not request.rt:
            # A client's type of a custom resource: serve it as the catalog says.
            request = dataclasses.replace(request, rt=served)
        try:
            return await self._audited(user, request)
        except StorageError as err:
            raise to_status(err) from err

    async def _audited(self, user: UserInfo, request: Request) -> Obj | WatchStream:
        if self.audit_log is None:
            return await self._handle(user, request)
        received = format_micro_time(self.clock.now())
        code, decision = 500, Result(Decision.NO_OPINION)
        try:
            decision = await self.authorize(user, request)
            result = await self._dispatch(user, request)
            code = 201 if request.verb == "create" else 200
            return result
        except errors.StatusError as err:
            code = err.code
            raise
        except StorageError as err:
            code = to_status(err).code
            raise
        finally:
            allowed = decision.decision is Decision.ALLOW
            self.audit_log.record(
                user,
                request,
                code,
                received=received,
                decision="allow" if allowed else "forbid",
                reason=decision.reason,
            )

    async def _handle(self, user: UserInfo, request: Request) -> Obj | WatchStream:
        await self.authorize(user, request)
        return await self._dispatch(user, request)

    async def _dispatch(self, user: UserInfo, request: Request) -> Obj | WatchStream:
        if request.verb not in request.rt.verbs and not request.subresource:
            raise errors.method_not_allowed()
        custom = request.rt.custom
        if custom is not None and custom.terminating and request.verb == "create":
            raise errors.StatusError(
                405,
                "MethodNotAllowed",
                "create not allowed while custom resource definition is terminating",
            )
        asked = request.rt
        if request.verb in _CONVERTED_WRITES and conversion.converts(asked):
            # Written at the storage version; the answer is converted back below. A delete
            # needs no conversion: it selects at the version asked, whose key is the storage's.
            request = await self._to_storage_version(user, request)
        if not request.is_write:
            return self.custom_resources.converted(asked, await self._read(user, request))
        with self.audit.recording(request.verb, request.rt.resource, request.subresource):
            try:
                result = await self._write(user, request)
            except StorageError as err:
                if request.asked is None:
                    raise
                raise to_status(err, request.asked) from err
        if request.rt is kinds.CUSTOM_RESOURCE_DEFINITIONS:
            # Served (or no longer served) once the write returns: the catalog follows the
            # change stream.
            await self.wait_committed(self.storage.revision)
        return self.custom_resources.converted(asked, result)

    async def _to_storage_version(self, user: UserInfo, request: Request) -> Request:
        """A write of a converted version (resource.k8s.io/v1beta1, v1beta2; events.k8s.io/v1)
        as a write of its storage type: the body converted; a patch applied to the object at
        the request's version and written as an update of the version it was applied to. The
        request keeps the version asked (`Request.asked`), whose declaration validates it."""
        stored = conversion.storage_type(request.rt)
        body = request.body
        if request.verb == "patch":
            if request.options.patch_type.startswith("application/apply-patch"):
                raise errors.unsupported_media_type(request.options.patch_type)
            get = Request("get", request.rt, request.namespace, request.name)
            old = await self._read(user, get)
            assert isinstance(old, dict)
            patched = patch_object(
                conversion.convert(old, request.rt),
                body,
                request.options.patch_type,
                request.rt,
                self.kinds.schemas,
            )
            patched.setdefault("metadata", {})["resourceVersion"] = meta.resource_version(old)
            self._decode_at(request, patched)
            return dataclasses.replace(
                request,
                verb="update",
                rt=stored,
                body=conversion.convert(patched, stored),
                asked=request.rt,
            )
        if isinstance(body, dict) and body.get("apiVersion") == request.rt.api_version:
            self._decode_at(request, body)
            body = conversion.convert(body, stored)
        return dataclasses.replace(request, rt=stored, body=body, asked=request.rt)

    def _decode_at(self, request: Request, body: Obj) -> None:
        """Field validation at the request's version, before conversion, as kube-apiserver
        decodes a body: unknown fields (400 under Strict, dropped otherwise) and type errors
        are reported with that version's field paths."""
        validation.require_field_types(
            request.rt,
            body,
            self.kinds.schemas,
            mode=request.options.field_validation,
            duplicates=request.options.duplicate_fields,
        )

    async def authorize(self, user: UserInfo, request: Request) -> Result:
        """The authorizers' ALLOW (with its reason), or a 403."""
        attrs = attributes(user, request)
        result = self.authorizer.authorize(attrs)
        # The graph follows the change stream and may trail a write that was just
        # acknowledged: a node is decided again once the watch cache caught up with the store.
        if (
            result.decision is not Decision.ALLOW
            and SYSTEM_NODES in user.groups
            and await self.watch_cache.wait_until_fresh(self.storage.revision, _GRAPH_WAIT)
        ):
            result = self.authorizer.authorize(attrs)
        if result.decision is Decision.ALLOW:
            return result
        raise errors.forbidden_request(
            user.name,
            request.verb,
            request.rt,
            request.namespace or None,
            request.name or None,
            result.reason,
            subresource=request.subresource,
        )

    async def _read(self, user: UserInfo, req: Request) -> Obj | WatchStream:
        rt, o = req.rt, req.options
        if req.verb == "get":
            await self.lists.wait_fresh(listoptions.parse_resource_version(o.resource_version))
            if req.subresource == "scale":
                paths = strategy_for(rt).scale
                if paths is None:
                    raise errors.not_found(rt, f"{req.name}/scale")
                return scale.scale_of(await self._get(rt, req.namespace, req.name), paths)
            return await self._get(rt, req.namespace, req.name)
        if req.verb == "list":
            return await reads.list_objects(
                self.lists,
                rt,
                req.namespace,
                label_selector=o.label_selector,
                field_selector=o.field_selector,
                limit=o.limit,
                continue_=o.continue_,
                resource_version=o.resource_version,
                resource_version_match=o.resource_version_match,
            )
        spec = reads.watch_spec(
            rt, req.namespace, o.label_selector, o.field_selector, o.allow_bookmarks
        )
        start = listoptions.parse_resource_version(o.resource_version)
        return await self.watch_cache.watch(
            spec, None if o.resource_version in ("", "0") else start
        )

    async def wait_committed(self, revision: int) -> None:
        """Until `revision` is committed (the watch cache has seen it), briefly."""
        await self.watch_cache.wait_until_fresh(revision, _COMMIT_WAIT)

    async def lookup(self, resource: str, namespace: str, name: str) -> Obj | None:
        """A stored core/v1 object by resource name (the token machinery's lookup)."""
        return await lookup_core_object(self.storage, resource, namespace, name)

    async def get_object(self, rt: ResourceType, namespace: str, name: str) -> Obj:
        return await self._get(rt, namespace, name)

    async def delete_object(
        self, user: UserInfo, rt: ResourceType, namespace: str, name: str
    ) -> Obj:
        return await self._delete(user, rt, namespace, name, None)

    async def _get(self, rt: ResourceType, namespace: str, name: str) -> Obj:
        obj = await self.storage.get(rt.key, namespace if rt.namespaced else "", name)
        if obj is None:
            raise errors.not_found(rt, name)
        return obj

    async def _write(self, user: UserInfo, req: Request) -> Obj:
        if req.verb == "create":
            return await self.writer.create(user, req)
        if req.verb == "update":
            return await self.writer.update(user, req)
        if req.verb == "patch":
            return await self.writer.patch(user, req)
        if req.verb == "delete":
            return await self._delete(user, req.rt, req.namespace, req.name, req.body)
        return await self._delete_collection(user, req)

    async def _delete(
        self, user: UserInfo, rt: ResourceType, namespace: str, name: str, options: Any
    ) -> Obj:
        strategy = strategy_for(rt)
        for attempt in range(_DELETE_CONFLICT_RETRIES):
            old = await self._get(rt, namespace, name)
            attrs = AdmissionAttributes(user, "DELETE", rt, namespace, name, None, old)
            await self.admission.admit(attrs)
            await self.admission.validate(attrs)
            try:
                return await self.deleter.delete(strategy, old, options or {})
            except RevisionConflict as err:
                # Changed since it was read: decide again on the fresh object.
                if attempt == _DELETE_CONFLICT_RETRIES - 1:
                    raise
                await self.wait_committed(err.actual)
        raise AssertionError("unreachable")

    async def _delete_collection(self, user: UserInfo, req: Request) -> Obj:
        listing = await self._read(
            user, Request("list", req.rt, req.namespace, options=req.options)
        )
        assert isinstance(listing, dict)
        deleted: list[Obj] = []
        for item in listing["items"]:
            try:
                result = await self._delete(
                    user, req.rt, meta.namespace(item), meta.name(item), req.body
                )
                self.audit.record("delete", req.rt.resource)
            except KeyNotFound:
                continue
            except errors.StatusError as err:
                if errors.is_not_found(err):
                    continue
                raise
            deleted.append(result if result.get("kind") == req.rt.kind else item)
        return list_envelope(req.rt, deleted, self.storage.revision, "", None)


_CONVERTED_WRITES = frozenset({"create", "update", "patch"})
"""The writes whose body a converted version (`conversion.converts`) has stored as another."""
_SERVER = UserInfo("system:apiserver", "", ("system:masters",))
"""The API server's own identity for what it writes itself (the default namespaces)."""


async def lookup_core_object(
    storage: Storage, resource: str, namespace: str, name: str
) -> Obj | None:
    """The stored core/v1 `resource` object (service accounts, pods, secrets, nodes), or None."""
    rt = kinds.lookup("", "v1", resource)
    return None if rt is None else await storage.get(rt.key, namespace, name)


def attributes(user: UserInfo, request: Request) -> Attributes:
    """The authorization attributes of a resource request; a list, watch or deletecollection
    selecting `metadata.name=X` carries the name X. A request for one Namespace
    (`/api/v1/namespaces/NAME[/SUB]`) carries NAME as its namespace too (RequestInfo), so a
    RoleBinding in NAME may grant access to the Namespace object itself."""
    name = request.name
    if not name and request.verb in ("list", "watch", "deletecollection"):
        selector = request.options.field_selector
        if selector:
            try:
                fields = strategy_for(request.rt).selectable_fields
                name = FieldSelector.parse(selector, fields).exact("metadata.name") or ""
            except errors.StatusError:
                name = ""
    rt = request.rt
    if rt.namespaced:
        namespace = request.namespace
    else:
        namespace = request.name if rt is kinds.NAMESPACES else ""
    return Attributes(
        user,
        request.verb,
        True,
        rt.group,
        rt.version,
        rt.resource,
        request.subresource,
        namespace,
        name,
        field_selector=request.options.field_selector,
        label_selector=request.options.label_selector,
    )
