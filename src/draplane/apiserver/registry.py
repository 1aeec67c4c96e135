"""The registry: every API verb over storage, shared by HTTP handlers and LocalClient.

Request path: admission (namespace lifecycle, NodeRestriction) -> defaulting -> strategy
(status vs main resource) -> validation -> storage with a resourceVersion precondition.
Writes that change nothing are not stored (no new revision, no watch event), like
kube-apiserver's GuaranteedUpdate.
"""

from __future__ import annotations

import uuid
from typing import Any

from draplane.api import errors, kinds, meta, validation
from draplane.api.apply import server_side_apply
from draplane.api.auth import UserInfo
from draplane.api.handler import WatchStream
from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj
from draplane.api.names import generate_name
from draplane.api.patch import patch_object
from draplane.apiserver import admission, listoptions, reads, strategy, writerules
from draplane.apiserver.audit import Audit
from draplane.apiserver.binding import BINDING_SUCCESS, binding_mutation
from draplane.apiserver.deletion import Deleter
from draplane.apiserver.listing import ListSource, list_envelope
from draplane.apiserver.nodegraph import NodeGraph
from draplane.apiserver.watchcache import WatchCache
from draplane.clock import REAL_CLOCK, Clock, format_time
from draplane.storage.interface import Storage

DEFAULT_NAMESPACES = ("default", "kube-system", "kube-node-lease", "kube-public")
APPLY_PATCH = "application/apply-patch+yaml"
_GENERATE_NAME_ATTEMPTS = 8
_PATCH_CONFLICT_RETRIES = 5


class Registry:
    def __init__(self, storage: Storage, *, clock: Clock = REAL_CLOCK) -> None:
        self.storage = storage
        self.clock = clock
        self.node_graph = NodeGraph()
        self._watch_cache = WatchCache(storage)
        self._watch_cache.add_observer(self.node_graph.observe)
        self.lists = ListSource(storage, self._watch_cache)
        self.deleter = Deleter(self)
        self.audit = Audit()

    @property
    def watch_cache(self) -> WatchCache:
        return self._watch_cache

    @watch_cache.setter
    def watch_cache(self, cache: WatchCache) -> None:
        cache.add_observer(self.node_graph.observe)
        self._watch_cache = cache
        self.lists = ListSource(self.storage, cache, self.lists.fresh_timeout)

    async def start(self) -> None:
        # The graph starts from the pods stored now and follows the change stream from the
        # same revision (neither call suspends between the two).
        pods, _ = await self.storage.list(kinds.PODS.key)
        self.node_graph.load(pods)
        await self.watch_cache.start()
        for ns in DEFAULT_NAMESPACES:
            if await self.storage.get(kinds.NAMESPACES.key, "", ns) is None:
                obj: Obj = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}
                await self._create(kinds.NAMESPACES, "", obj)

    async def stop(self) -> None:
        await self.watch_cache.stop()

    # --- reads -------------------------------------------------------------------------

    async def get(
        self,
        user: UserInfo,
        rt: ResourceType,
        namespace: str,
        name: str,
        *,
        subresource: str = "",
        resource_version: str = "",
    ) -> Obj:
        """`resource_version`: "" the latest, "0" any, N not older than N (waits, then 504)."""
        await self.lists.wait_fresh(listoptions.parse_resource_version(resource_version))
        if rt is kinds.RESOURCE_CLAIMS:
            await admission.node_may_read_claim(
                self.storage, self.node_graph, user, namespace, name
            )
        return await self._get(rt, namespace, name)

    async def _get(self, rt: ResourceType, namespace: str, name: str) -> Obj:
        obj = await self.storage.get(rt.key, namespace if rt.namespaced else "", name)
        if obj is None:
            raise errors.not_found(rt, name)
        return obj

    async def list(
        self,
        user: UserInfo,
        rt: ResourceType,
        namespace: str,
        *,
        label_selector: str = "",
        field_selector: str = "",
        limit: int = 0,
        continue_: str = "",
        resource_version: str = "",
        resource_version_match: str = "",
    ) -> Obj:
        self._forbid_node_claim_list(user, rt, "list")
        return await reads.list_objects(
            self.lists,
            rt,
            namespace,
            label_selector=label_selector,
            field_selector=field_selector,
            limit=limit,
            continue_=continue_,
            resource_version=resource_version,
            resource_version_match=resource_version_match,
        )

    async def watch(
        self,
        user: UserInfo,
        rt: ResourceType,
        namespace: str,
        *,
        resource_version: str = "",
        label_selector: str = "",
        field_selector: str = "",
        allow_bookmarks: bool = False,
        timeout_seconds: int = 0,
    ) -> WatchStream:
        self._forbid_node_claim_list(user, rt, "watch")
        spec = reads.watch_spec(rt, namespace, label_selector, field_selector, allow_bookmarks)
        start = listoptions.parse_resource_version(resource_version)
        return await self.watch_cache.watch(spec, None if resource_version in ("", "0") else start)

    @staticmethod
    def _forbid_node_claim_list(user: UserInfo, rt: ResourceType, verb: str) -> None:
        if user.node_name is not None and rt is kinds.RESOURCE_CLAIMS:
            raise errors.forbidden_request(user.name, verb, rt, None)

    # --- create ------------------------------------------------------------------------

    async def _create_impl(
        self,
        user: UserInfo,
        rt: ResourceType,
        namespace: str,
        obj: Obj,
        *,
        subresource: str = "",
        name: str = "",
        field_manager: str = "",
        dry_run: bool = False,
    ) -> Obj:
        if subresource == "binding" and rt is kinds.PODS:
            return await self._bind(user, namespace, name, obj)
        if subresource:
            raise errors.method_not_allowed()
        if not isinstance(obj, dict):
            raise errors.bad_request("the request body must be an object")
        admission.node_may_write(user, rt, obj=obj, old=None, subresource="")
        return await self._create(rt, namespace, meta.deep_copy(obj), dry_run=dry_run)

    async def _create(
        self, rt: ResourceType, namespace: str, obj: Obj, *, dry_run: bool = False
    ) -> Obj:
        writerules.check_type(rt, obj)
        md = obj.get("metadata")
        if md is None:
            md = obj["metadata"] = {}
        elif not isinstance(md, dict):
            raise errors.bad_request("metadata must be an object")
        writerules.set_namespace(rt, namespace, md)
        await admission.check_namespace(
            self.storage, rt, md.get("namespace", ""), name=str(md.get("name") or "")
        )
        obj["apiVersion"], obj["kind"] = rt.api_version, rt.kind
        for field in (
            "resourceVersion",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "selfLink",
        ):
            md.pop(field, None)
        md["uid"] = str(uuid.uuid4())
        md["creationTimestamp"] = format_time(self.clock.now())
        md["generation"] = 1
        validation.default(rt, obj)
        strategy.prepare_for_create(rt, obj)
        generated = not md.get("name") and bool(md.get("generateName"))
        for attempt in range(_GENERATE_NAME_ATTEMPTS):
            if generated:
                md["name"] = generate_name(str(md["generateName"]))
            causes = validation.validate_create(rt, obj)
            if causes:
                raise errors.invalid_object(rt.kind, meta.name(obj), causes, rt)
            if dry_run:
                return obj
            try:
                return await self.storage.create(rt.key, obj)
            except errors.StatusError as err:
                if (
                    not (generated and errors.is_already_exists(err))
                    or attempt == _GENERATE_NAME_ATTEMPTS - 1
                ):
                    raise
        raise AssertionError("unreachable")

    async def _bind(self, user: UserInfo, namespace: str, name: str, binding: Obj) -> Obj:
        bind_name, mutate = binding_mutation(binding, name, format_time(self.clock.now()))
        await self._guaranteed_update(
            kinds.PODS, namespace, bind_name, mutate, subresource="binding"
        )
        return BINDING_SUCCESS

    # --- update and patch --------------------------------------------------------------

    async def _update_impl(
        self,
        user: UserInfo,
        rt: ResourceType,
        namespace: str,
        name: str,
        obj: Obj,
        *,
        subresource: str = "",
        field_manager: str = "",
        dry_run: bool = False,
    ) -> Obj:
        if not isinstance(obj, dict):
            raise errors.bad_request("the request body must be an object")
        writerules.check_type(rt, obj)
        body_name = (obj.get("metadata") or {}).get("name")
        if body_name and body_name != name:
            raise errors.bad_request(
                f"the name of the object ({body_name}) does not match the name on the URL ({name})"
            )
        old = await self._get(rt, namespace, name)
        precondition = (obj.get("metadata") or {}).get("resourceVersion")
        if precondition and precondition != meta.resource_version(old):
            raise errors.conflict(rt, name)
        new = writerules.merge_for_write(rt, subresource, meta.deep_copy(obj), old, namespace, name)
        admission.node_may_write(user, rt, obj=new, old=old, subresource=subresource)
        return await self._store_update(rt, subresource, new, old, dry_run=dry_run)

    async def _patch_impl(
        self,
        user: UserInfo,
        rt: ResourceType,
        namespace: str,
        name: str,
        patch: Any,
        patch_type: str,
        *,
        subresource: str = "",
        field_manager: str = "",
        force: bool = False,
        dry_run: bool = False,
    ) -> Obj:
        for attempt in range(_PATCH_CONFLICT_RETRIES):
            try:
                return await self._patch_once(
                    user,
                    rt,
                    namespace,
                    name,
                    patch,
                    patch_type,
                    subresource=subresource,
                    field_manager=field_manager,
                    force=force,
                    dry_run=dry_run,
                )
            except errors.StatusError as err:
                pinned = isinstance(patch, dict) and (patch.get("metadata") or {}).get(
                    "resourceVersion"
                )
                if (
                    not errors.is_conflict(err)
                    or pinned
                    or err.details.get("causes")
                    or attempt == _PATCH_CONFLICT_RETRIES - 1
                ):
                    raise
        raise AssertionError("unreachable")

    async def _patch_once(
        self,
        user: UserInfo,
        rt: ResourceType,
        namespace: str,
        name: str,
        patch: Any,
        patch_type: str,
        *,
        subresource: str,
        field_manager: str,
        force: bool,
        dry_run: bool,
    ) -> Obj:
        ns = namespace if rt.namespaced else ""
        old = await self.storage.get(rt.key, ns, name)
        if patch_type.split(";")[0].strip() == APPLY_PATCH:
            if not isinstance(patch, dict):
                raise errors.bad_request("apply patch body must be an object")
            applied = server_side_apply(
                old,
                patch,
                rt,
                field_manager=field_manager or "unknown",
                force=force,
                now=format_time(self.clock.now()),
                subresource=subresource,
            )
            if old is None:
                admission.node_may_write(user, rt, obj=applied, old=None, subresource="")
                return await self._create(rt, namespace, applied, dry_run=dry_run)
        else:
            if old is None:
                raise errors.not_found(rt, name)
            applied = patch_object(old, patch, patch_type, rt)
        md = applied.get("metadata")
        if not isinstance(md, dict):
            raise errors.bad_request("metadata must be an object")
        if md.get("name") != name:
            raise errors.bad_request("the name of the object cannot be changed by a patch")
        precondition = md.get("resourceVersion")
        if precondition and precondition != meta.resource_version(old):
            raise errors.conflict(rt, name)
        new = writerules.merge_for_write(rt, subresource, applied, old, namespace, name)
        admission.node_may_write(user, rt, obj=new, old=old, subresource=subresource)
        return await self._store_update(rt, subresource, new, old, dry_run=dry_run)

    async def _store_update(
        self, rt: ResourceType, subresource: str, new: Obj, old: Obj, *, dry_run: bool = False
    ) -> Obj:
        if subresource == "status":
            causes = validation.validate_status_update(rt, new, old)
        elif subresource == "binding":
            causes = []  # the binding strategy sets spec.nodeName, which updates may not
        else:
            causes = validation.validate_update(rt, new, old)
        if causes:
            raise errors.invalid_object(rt.kind, meta.name(new), causes, rt)
        if strategy.same_content(new, old) or dry_run:
            return old if not dry_run else new
        if self.deleter.should_remove(rt, new):
            return await self.deleter.remove(rt, new, expected_rv=int(meta.resource_version(old)))
        return await self.storage.update(rt.key, new, expected_rv=int(meta.resource_version(old)))

    async def _guaranteed_update(
        self, rt: ResourceType, namespace: str, name: str, mutate: Any, *, subresource: str = ""
    ) -> Obj:
        """Read-modify-write with retries on conflict; `mutate` returns the new object."""
        for attempt in range(_PATCH_CONFLICT_RETRIES):
            old = await self._get(rt, namespace, name)
            new = mutate(old)
            try:
                return await self._store_update(rt, subresource, new, old)
            except errors.StatusError as err:
                if not errors.is_conflict(err) or attempt == _PATCH_CONFLICT_RETRIES - 1:
                    raise
        raise AssertionError("unreachable")

    # --- delete ------------------------------------------------------------------------

    async def _delete_impl(
        self,
        user: UserInfo,
        rt: ResourceType,
        namespace: str,
        name: str,
        *,
        options: Obj | None = None,
    ) -> Obj:
        old = await self._get(rt, namespace, name)
        admission.node_may_write(user, rt, obj=None, old=old, subresource="")
        return await self.deleter.delete(rt, old, options or {})

    async def delete_collection(
        self,
        user: UserInfo,
        rt: ResourceType,
        namespace: str,
        *,
        label_selector: str = "",
        field_selector: str = "",
        options: Obj | None = None,
    ) -> Obj:
        listing = await self.list(
            user, rt, namespace, label_selector=label_selector, field_selector=field_selector
        )
        deleted: list[Obj] = []
        for item in listing["items"]:
            try:
                admission.node_may_write(user, rt, obj=None, old=item, subresource="")
                result = await self.deleter.delete(rt, item, options or {})
                self.audit.record("delete", rt.resource)
            except errors.StatusError as err:
                if errors.is_not_found(err):
                    continue
                raise
            deleted.append(result if result.get("kind") == rt.kind else item)
        return list_envelope(rt, deleted, self.storage.revision, "", None)

    # --- audited write verbs (ApiHandler) ------------------------------------------------

    async def create(
        self, user: UserInfo, rt: ResourceType, namespace: str, obj: Obj, **kwargs: Any
    ) -> Obj:
        with self.audit.recording("create", rt.resource, kwargs.get("subresource", "")):
            return await self._create_impl(user, rt, namespace, obj, **kwargs)

    async def update(
        self, user: UserInfo, rt: ResourceType, namespace: str, name: str, obj: Obj, **kwargs: Any
    ) -> Obj:
        with self.audit.recording("update", rt.resource, kwargs.get("subresource", "")):
            return await self._update_impl(user, rt, namespace, name, obj, **kwargs)

    async def patch(
        self,
        user: UserInfo,
        rt: ResourceType,
        namespace: str,
        name: str,
        patch: Any,
        patch_type: str,
        **kwargs: Any,
    ) -> Obj:
        with self.audit.recording("patch", rt.resource, kwargs.get("subresource", "")):
            return await self._patch_impl(user, rt, namespace, name, patch, patch_type, **kwargs)

    async def delete(
        self,
        user: UserInfo,
        rt: ResourceType,
        namespace: str,
        name: str,
        *,
        options: Obj | None = None,
    ) -> Obj:
        with self.audit.recording("delete", rt.resource, ""):
            return await self._delete_impl(user, rt, namespace, name, options=options)
