"""The read verbs' pure parts: a LIST from a consistent source, and what a watch selects."""

from __future__ import annotations

from draplane.api import kinds
from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj
from draplane.api.selectors import FieldSelector
from draplane.apiserver import listoptions
from draplane.apiserver.listing import ListSource, list_envelope, make_filter, paginate
from draplane.apiserver.strategies.table import strategy_for
from draplane.apiserver.watchcache import WatchSpec


async def list_objects(
    lists: ListSource,
    rt: ResourceType,
    namespace: str,
    *,
    label_selector: str,
    field_selector: str,
    limit: int,
    continue_: str,
    resource_version: str,
    resource_version_match: str,
) -> Obj:
    """A `<Kind>List` page: from the latest state, a snapshot, or a `continue` token."""
    listoptions.validate_list(
        resource_version=resource_version, match=resource_version_match, continue_=continue_
    )
    matches = make_filter(rt, label_selector, field_selector)
    if continue_:
        objs, revision = await lists.read_continue(
            rt, namespace, token=continue_, resource_version=resource_version
        )
        paginated = True
    else:
        objs, revision, paginated = await lists.read(
            rt,
            namespace,
            resource_version=resource_version,
            match=resource_version_match,
            limit=limit,
        )
    items = [o for o in objs if matches(o)]
    page, token, remaining = paginate(items, limit=limit if paginated else 0, revision=revision)
    return list_envelope(rt, page, revision, token, remaining)


def watch_spec(
    rt: ResourceType, namespace: str, label_selector: str, field_selector: str, bookmarks: bool
) -> WatchSpec:
    return WatchSpec(
        rt.key,
        namespace,
        make_filter(rt, label_selector, field_selector),
        bookmarks,
        rt.kind,
        rt.api_version,
        node_name=_node_name_selector(rt, field_selector),
    )


def _node_name_selector(rt: ResourceType, field_selector: str) -> str | None:
    """The node of a pod watch that selects `spec.nodeName=<node>` (how kubelets watch)."""
    if rt is not kinds.PODS or not field_selector:
        return None
    return FieldSelector.parse(field_selector, strategy_for(rt).selectable_fields).exact(
        "spec.nodeName"
    )
