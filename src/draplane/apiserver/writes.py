"""The write verbs over storage: create, update, patch and the guaranteed update.

Each write runs, in order: mutating admission -> the kind's strategy (defaulting, prepare, merge
into the stored object) -> validation -> validating admission -> the strategy's storage-time
check -> storage with a resourceVersion precondition. Writes that change nothing are not stored
(no new revision, no watch event), like kube-apiserver's GuaranteedUpdate. Conflicts on the
stored revision are retried inside the server unless the client pinned a resourceVersion.

The writer sees the server through the narrow `WriteContext`, never the registry: what a kind's
hooks may use (`strategies.context.ServerContext`, handed on to them), the admission chain, the
removal of an object whose deletion completes, and the wait for a revision to be committed.
`Registry` satisfies it.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Protocol

from draplane.api import errors, kinds, meta, validation
from draplane.api.apply import server_side_apply
from draplane.api.auth import UserInfo
from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj
from draplane.api.names import generate_name
from draplane.api.patch import STRATEGIC_MERGE_PATCH, patch_object
from draplane.api.request import NO_OPTIONS, Options, Request
from draplane.api.schema import Schemas
from draplane.api.validation import fieldtypes
from draplane.apiserver.admission import AdmissionAttributes, Chain
from draplane.apiserver.strategies import ResourceStrategy, same_content, scale
from draplane.apiserver.strategies.context import ServerContext
from draplane.apiserver.strategies.merge import check_type, merge_for_write, set_namespace
from draplane.apiserver.strategies.table import strategy_for
from draplane.clock import format_time
from draplane.storage.errors import KeyExists, RevisionConflict

APPLY_PATCH = "application/apply-patch+yaml"
_GENERATE_NAME_ATTEMPTS = 8
_CONFLICT_RETRIES = 1000
"""GuaranteedUpdate retries until the write lands; the cap only guards against a livelock."""
_CLEARED_ON_CREATE = (
    "resourceVersion",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "selfLink",
)

Mutation = Callable[[Obj], Obj]


class Remover(Protocol):
    """The end of a deletion, when a write leaves the object with nothing to wait for
    (`deletion.Deleter`)."""

    def should_remove(self, strategy: ResourceStrategy, obj: Obj) -> bool:
        """Whether `obj` is marked deleted with no finalizers and no grace period left."""
        ...

    def remove(self, strategy: ResourceStrategy, obj: Obj, *, expected_rv: int) -> Awaitable[Obj]:
        """Remove `obj` from storage if it is still at `expected_rv`; the DELETE response."""
        ...


class WriteContext(ServerContext, Protocol):
    """What the write verbs use of the server."""

    @property
    def admission(self) -> Chain: ...

    @property
    def deleter(self) -> Remover: ...

    def wait_committed(self, revision: int) -> Awaitable[None]:
        """Until `revision` is committed (the watch cache has seen it), briefly."""
        ...


class Writer:
    def __init__(self, server: WriteContext) -> None:
        self._r = server

    # --- create ------------------------------------------------------------------------

    async def create(self, user: UserInfo, req: Request) -> Obj:
        strategy = strategy_for(req.rt)
        if req.subresource:
            handler = strategy.subresource_create.get(req.subresource)
            if handler is None:
                raise errors.method_not_allowed()
            return await handler(self._r, user, _decoded(req, self._r.kinds.schemas))
        if not isinstance(req.body, dict):
            raise errors.bad_request("the request body must be an object")
        if strategy.create_only is not None:
            return await strategy.create_only(self._r, user, _decoded(req, self._r.kinds.schemas))
        return await self.create_object(
            user,
            strategy,
            req.namespace,
            meta.deep_copy(req.body),
            dry_run=req.options.dry_run,
            options=req.options,
            asked=req.asked,
        )

    async def create_object(
        self,
        user: UserInfo,
        strategy: ResourceStrategy,
        namespace: str,
        obj: Obj,
        *,
        dry_run: bool,
        options: Options = NO_OPTIONS,
        asked: ResourceType | None = None,
    ) -> Obj:
        """Create `obj` as `strategy`'s kind; `asked`: the version the client wrote when that
        is its storage type, whose declaration defaults and validates the object."""
        rt = strategy.rt
        checks = strategy if asked is None else strategy_for(asked)
        check_type(rt, obj, self._r.kinds.schemas, options)
        md = obj.get("metadata")
        if md is None:
            md = obj["metadata"] = {}
        elif not isinstance(md, dict):
            raise errors.bad_request("metadata must be an object")
        set_namespace(rt, namespace, md)
        attrs = AdmissionAttributes(
            user, "CREATE", rt, md.get("namespace", ""), "", obj, dry_run=dry_run
        )
        await self._r.admission.admit(attrs)
        obj["apiVersion"], obj["kind"] = rt.api_version, rt.kind
        for field in _CLEARED_ON_CREATE:
            md.pop(field, None)
        md["uid"] = str(uuid.uuid4())
        md["creationTimestamp"] = format_time(self._r.clock.now())
        md["generation"] = 1
        checks.apply_defaults(obj)
        strategy.prepare_for_create(obj)
        strategy.fill_status(obj)
        validation.normalize(rt, obj, self._r.kinds.schemas)
        strategy.normalize(obj)
        generated = not md.get("name") and bool(md.get("generateName"))
        for attempt in range(_GENERATE_NAME_ATTEMPTS):
            if generated:
                md["name"] = generate_name(str(md["generateName"]))
            causes = checks.validate_create(obj, self._r.kinds.schemas)
            if causes:
                raise errors.invalid_object(rt.kind, meta.name(obj), causes, checks.rt)
            attrs.name = meta.name(obj)
            await self._r.admission.validate(attrs)
            if strategy.check_write is not None:
                await strategy.check_write(self._r, user, obj, None)
            if dry_run:
                return obj
            try:
                return await self._r.storage.create(rt.key, obj)
            except KeyExists:
                if not generated or attempt == _GENERATE_NAME_ATTEMPTS - 1:
                    raise
        raise AssertionError("unreachable")

    # --- update and patch --------------------------------------------------------------

    async def update(self, user: UserInfo, req: Request) -> Obj:
        if req.subresource == "scale":
            return await self._scale(user, req)
        obj = req.body
        if not isinstance(obj, dict):
            raise errors.bad_request("the request body must be an object")
        rt = req.rt
        # Decoded once, on a copy unless the body is the request's own (the caller's body is
        # not changed): unknown fields are dropped and warned about here, so the writes below
        # need not decode it again.
        if not req.owned:
            obj = meta.deep_copy(obj)
        check_type(rt, obj, self._r.kinds.schemas, req.options)
        body_md = obj.get("metadata") or {}
        if not isinstance(body_md, dict):
            raise errors.bad_request("metadata must be an object")
        body_name = body_md.get("name")
        if body_name and body_name != req.name:
            raise errors.bad_request(
                f"the name of the object ({body_name}) does not match the name on the URL "
                f"({req.name})"
            )
        precondition = body_md.get("resourceVersion")

        def mutate(old: Obj) -> Obj:
            if precondition and precondition != meta.resource_version(old):
                raise errors.conflict(req.asked or rt, req.name)
            # With a resourceVersion precondition there is no retry and this runs once: the
            # (already private) body itself; a retry needs it unchanged, so gets a copy.
            return obj if precondition else meta.deep_copy(obj)

        return await self.guaranteed_update(
            user, req, mutate, retry=not precondition, dry_run=req.options.dry_run, decoded=True
        )

    async def patch(self, user: UserInfo, req: Request) -> Obj:
        rt, patch, patch_type = req.rt, req.body, req.options.patch_type
        media_type = patch_type.split(";")[0].strip()
        if rt.custom is not None and media_type == STRATEGIC_MERGE_PATCH:
            # Custom resources have no patch strategy (apiextensions-apiserver's patch types).
            raise errors.StatusError(
                415,
                "UnsupportedMediaType",
                "the body of the request was in an unknown format - accepted media types "
                "include: application/json-patch+json, application/merge-patch+json, "
                "application/apply-patch+yaml",
            )
        apply = media_type == APPLY_PATCH
        if req.subresource == "scale":
            if apply:
                raise errors.unsupported_media_type(patch_type)
            return await self._scale(user, req)
        if apply:
            if not isinstance(patch, dict):
                raise errors.bad_request("apply patch body must be an object")
            old = await self._r.storage.get(rt.key, req.namespace, req.name)
            if old is None:
                applied = self._apply(None, req)
                return await self.create_object(
                    user,
                    strategy_for(rt),
                    req.namespace,
                    applied,
                    dry_run=req.options.dry_run,
                    options=req.options,
                )
        pinned = (
            isinstance(patch, dict)
            and isinstance(patch.get("metadata"), dict)
            and bool(patch["metadata"].get("resourceVersion"))
        )

        def mutate(old: Obj) -> Obj:
            applied = (
                self._apply(old, req)
                if apply
                else patch_object(old, patch, patch_type, rt, self._r.kinds.schemas)
            )
            md = applied.get("metadata")
            if not isinstance(md, dict):
                raise errors.bad_request("metadata must be an object")
            if md.get("name") != req.name:
                raise errors.bad_request("the name of the object cannot be changed by a patch")
            precondition = md.get("resourceVersion")
            if precondition and precondition != meta.resource_version(old):
                raise errors.conflict(req.asked or rt, req.name)
            return applied

        return await self.guaranteed_update(
            user, req, mutate, retry=not pinned, dry_run=req.options.dry_run
        )

    async def _scale(self, user: UserInfo, req: Request) -> Obj:
        """PUT or PATCH of `scale`: the Scale of the stored object is replaced or patched, then
        its replicas are written to the object, at the paths of the kind's strategy, as a
        main-resource update."""
        rt = req.rt
        paths = strategy_for(rt).scale
        if paths is None:
            raise errors.not_found(rt, f"{req.name}/scale")

        def mutate(old: Obj) -> Obj:
            body = req.body
            if req.verb == "patch":
                scaled = scale.scale_of(old, paths)
                body = patch_object(scaled, body, req.options.patch_type, rt, self._r.kinds.schemas)
            return scale.apply_scale(rt, old, body, paths)

        stored = await self.guaranteed_update(
            user,
            dataclasses.replace(req, subresource=""),
            mutate,
            retry=not scale.pinned(req.body),
            dry_run=req.options.dry_run,
        )
        return scale.scale_of(stored, paths)

    def _apply(self, old: Obj | None, req: Request) -> Obj:
        return server_side_apply(
            old,
            req.body,
            req.rt,
            self._r.kinds.schemas,
            field_manager=req.options.field_manager or "unknown",
            force=req.options.force,
            now=format_time(self._r.clock.now()),
            subresource=req.subresource,
        )

    async def guaranteed_update(
        self,
        user: UserInfo,
        req: Request,
        mutate: Mutation,
        *,
        retry: bool = True,
        dry_run: bool = False,
        decoded: bool = False,
    ) -> Obj:
        """Read, `mutate`, admit, validate and store, retrying on a conflict with the stored
        revision (GuaranteedUpdate) unless `retry` is off. `decoded`: what `mutate` returns
        passed the decoding step already (field types, unknown fields)."""
        strategy = strategy_for(req.rt)
        schemas = self._r.kinds.schemas
        for attempt in range(_CONFLICT_RETRIES):
            old = await self._get(req.rt, req.namespace, req.name, req.asked)
            try:
                new = merge_for_write(
                    strategy,
                    req.subresource,
                    mutate(old),
                    old,
                    req.namespace,
                    req.name,
                    req.options,
                    schemas=schemas,
                    decoded=decoded,
                )
                validation.normalize(req.rt, new, schemas)
                return await self.store_update(
                    user, strategy, req.subresource, new, old, dry_run=dry_run, asked=req.asked
                )
            except RevisionConflict as err:
                # The stored object changed since it was read: read, mutate and check again
                # (a resourceVersion the client sent is checked by `mutate` and not retried),
                # once the write we lost to is committed and readable.
                if not retry or attempt == _CONFLICT_RETRIES - 1:
                    raise
                await self._r.wait_committed(err.actual)
        raise AssertionError("unreachable")

    async def store_update(
        self,
        user: UserInfo,
        strategy: ResourceStrategy,
        subresource: str,
        new: Obj,
        old: Obj,
        *,
        dry_run: bool = False,
        asked: ResourceType | None = None,
    ) -> Obj:
        rt = strategy.rt
        checks = strategy if asked is None else strategy_for(asked)
        attrs = AdmissionAttributes(
            user,
            "UPDATE",
            rt,
            meta.namespace(old) if rt.namespaced else "",
            meta.name(old),
            new,
            old,
            subresource,
            dry_run,
        )
        await self._r.admission.admit(attrs)
        if subresource == "status":
            causes = strategy.validate_status_update(new, old)
        elif subresource == "binding":
            causes = []  # the binding strategy sets spec.nodeName, which updates may not
        else:
            causes = checks.validate_main_update(new, old, self._r.kinds.schemas)
        if causes:
            raise errors.invalid_object(rt.kind, meta.name(new), causes, checks.rt)
        await self._r.admission.validate(attrs)
        if strategy.check_write is not None and not subresource:
            await strategy.check_write(self._r, user, new, old)
        if strategy.check_status_write is not None and subresource == "status":
            await strategy.check_status_write(self._r, user, new, old)
        if same_content(new, old) or dry_run:
            return old if not dry_run else new
        expected = int(meta.resource_version(old))
        if self._r.deleter.should_remove(strategy, new):
            return await self._r.deleter.remove(strategy, new, expected_rv=expected)
        return await self._r.storage.update(rt.key, new, expected_rv=expected)

    async def _get(
        self, rt: ResourceType, namespace: str, name: str, asked: ResourceType | None = None
    ) -> Obj:
        """The stored object; 404 naming `asked` (the version the client wrote) or `rt`."""
        obj = await self._r.storage.get(rt.key, namespace if rt.namespaced else "", name)
        if obj is None:
            raise errors.not_found(asked or rt, name)
        return obj


def _decoded(req: Request, schemas: Schemas) -> Request:
    """A create-only or subresource body (a review, Binding, TokenRequest) after field
    validation against its own kind: unknown fields dropped from a copy, or 400 under Strict.
    Field types are left to the handler, which reports them its own way."""
    if not isinstance(req.body, dict):
        return req
    rt = req.rt
    if req.subresource in kinds.SUBRESOURCE_KINDS:
        group, version, kind = kinds.SUBRESOURCE_KINDS[req.subresource]
        rt = ResourceType(group, version, req.subresource, kind, rt.namespaced, kind.lower())
    body = meta.deep_copy(req.body)
    fieldtypes.decode_fields(
        rt,
        body,
        schemas,
        mode=req.options.field_validation,
        duplicates=req.options.duplicate_fields,
    )
    return replace(req, body=body)
