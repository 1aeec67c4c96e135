"""Registry operations, profile resolution and validation, and the framework's run points."""

from __future__ import annotations

import pytest

from draplane.api.errors import StatusError
from draplane.api.kinds import POD_SCHEDULING_CONTEXTS, RESOURCE_CLAIMS, RESOURCE_CLASSES
from draplane.scheduler.config import PluginRef, PluginSet, Profile
from draplane.scheduler.framework import (
    SUCCESS,
    Code,
    CycleState,
    Handle,
    NodeInfo,
    PodInfo,
    Registry,
    Status,
)
from draplane.scheduler.plugins import names
from draplane.scheduler.plugins.dynamicresources.hints import (
    CLAIM_SELECTOR,
    SCHEDULING_CONTEXT_SELECTOR,
)
from draplane.scheduler.plugins.registry import new_in_tree_registry
from draplane.scheduler.runtime import Framework, merge, register, unregister
from draplane.testing.apiobjects import StaticLister
from draplane.testing.builders import make_node, make_pod
from draplane.testing.fake_plugins import (
    FakeFilterPlugin,
    FakePostFilterPlugin,
    FakePreEnqueuePlugin,
    FakePreFilterPlugin,
    FakeReservePlugin,
    factory_for,
    registry_of,
)

HANDLE = Handle(client=None, listers={})  # type: ignore[arg-type]
NO_DRA = {"multiPoint": PluginSet(disabled=(names.DYNAMIC_RESOURCES,))}
IN_TREE_WITHOUT_DRA = Profile(plugins=NO_DRA)


def build(profile: Profile, *extra: object) -> Framework:
    registry = new_in_tree_registry()
    merge(registry, registry_of(extra))
    return Framework(profile=profile, registry=registry, handle=HANDLE)


def test_register_rejects_duplicates_and_unknown_names() -> None:
    registry: Registry = {}
    register(registry, name="A", factory=factory_for(object()))
    with pytest.raises(ValueError, match="already exists"):
        register(registry, name="A", factory=factory_for(object()))
    with pytest.raises(ValueError, match="already exists"):
        merge(registry, {"A": factory_for(object())})
    unregister(registry, "A")
    with pytest.raises(ValueError, match="no plugin"):
        unregister(registry, "A")
    assert registry == {}


def test_default_profile_sorts_plugins_into_points() -> None:
    fw = build(IN_TREE_WITHOUT_DRA)
    assert fw.queue_sort.name == names.PRIORITY_SORT
    assert [p.name for p in fw.filter_plugins] == [
        names.NODE_UNSCHEDULABLE,
        names.NODE_NAME,
        names.TAINT_TOLERATION,
        names.NODE_AFFINITY,
        names.NODE_RESOURCES_FIT,
    ]
    assert [p.name for p in fw.pre_filter_plugins] == [names.NODE_AFFINITY]
    assert [p.name for p in fw.score_plugins] == [names.NODE_RESOURCES_FIT]
    assert fw.weights == {names.NODE_RESOURCES_FIT: 1}
    assert [p.name for p in fw.bind_plugins] == [names.DEFAULT_BINDER]
    assert fw.pre_enqueue_plugins == []


def test_explicitly_enabled_plugins_come_first_at_their_point() -> None:
    fake = FakeFilterPlugin()
    profile = Profile(
        plugins={
            "multiPoint": PluginSet(disabled=(names.DYNAMIC_RESOURCES,)),
            "filter": PluginSet(enabled=(PluginRef("FakeFilter"),), disabled=("*",)),
        }
    )
    fw = build(profile, fake)
    assert [p.name for p in fw.filter_plugins] == ["FakeFilter"]


@pytest.mark.parametrize(
    ("profile", "fields"),
    [
        pytest.param(
            Profile(plugins={"multiPoint": PluginSet(disabled=("*",))}),
            ["profiles[0].plugins.queueSort", "profiles[0].plugins.bind"],
            id="no-queue-sort-no-binder",
        ),
        pytest.param(
            Profile(
                plugins={
                    "bind": PluginSet(disabled=("*",)),
                    "multiPoint": PluginSet(disabled=("DynamicResources",)),
                }
            ),
            ["profiles[0].plugins.bind"],
            id="no-binder",
        ),
        pytest.param(
            Profile(plugins={**NO_DRA, "filter": PluginSet(enabled=(PluginRef("Nope"),))}),
            ["profiles[0].plugins.filter.enabled[0]"],
            id="unknown-plugin",
        ),
        pytest.param(
            Profile(plugins={**NO_DRA, "filter": PluginSet(enabled=(PluginRef("PrioritySort"),))}),
            ["profiles[0].plugins.filter.enabled[0]"],
            id="plugin-lacks-point",
        ),
        pytest.param(
            Profile(plugins=NO_DRA, plugin_config={"Nope": {}}),
            ["profiles[0].pluginConfig"],
            id="config-for-unknown-plugin",
        ),
        pytest.param(
            Profile(
                plugins=NO_DRA,
                plugin_config={"NodeResourcesFit": {"scoringStrategy": {"type": "MostAllocated"}}},
            ),
            ["args.scoringStrategy.type"],
            id="unsupported-args",
        ),
    ],
)
def test_invalid_profiles_are_rejected_with_field_errors(
    profile: Profile, fields: list[str]
) -> None:
    with pytest.raises(StatusError) as info:
        build(profile)
    assert info.value.reason == "Invalid"
    assert [c["field"] for c in info.value.details["causes"]] == fields


def test_pre_enqueue_names_the_rejecting_plugin() -> None:
    gate = FakePreEnqueuePlugin(blocked={"p"})
    fw = build(
        Profile(
            plugins={
                "multiPoint": PluginSet(
                    enabled=(PluginRef("FakePreEnqueue"),), disabled=(names.DYNAMIC_RESOURCES,)
                ),
            }
        ),
        gate,
    )
    assert fw.run_pre_enqueue_plugins(make_pod("p").obj()) == Status(
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("blocked by test",), "FakePreEnqueue"
    )
    assert fw.run_pre_enqueue_plugins(make_pod("q").obj()) == SUCCESS


@pytest.mark.parametrize(
    ("status", "want"),
    [
        pytest.param(SUCCESS, SUCCESS, id="success"),
        pytest.param(
            Status.unresolvable("no"),
            Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("no",), "FakeReserve"),
            id="rejected",
        ),
        pytest.param(
            Status.error("boom"),
            Status(Code.ERROR, ('running Reserve plugin "FakeReserve": boom',), "FakeReserve"),
            id="error",
        ),
    ],
)
async def test_reserve_and_unreserve(status: Status, want: Status) -> None:
    reserve = FakeReservePlugin(status)
    fw = build(
        Profile(
            plugins={
                "multiPoint": PluginSet(
                    enabled=(PluginRef("FakeReserve"),), disabled=(names.DYNAMIC_RESOURCES,)
                ),
            }
        ),
        reserve,
    )
    pod_info = PodInfo(make_pod("p").obj())
    assert await fw.run_reserve_plugins_reserve(CycleState(), pod_info, "n") == want
    await fw.run_reserve_plugins_unreserve(CycleState(), pod_info, "n")
    assert reserve.unreserved == ["default/p"]


def test_filters_in_order_without_skipped_plugins() -> None:
    fake = FakeFilterPlugin(failed_nodes={"bad": Code.UNSCHEDULABLE})
    fw = build(
        Profile(
            plugins={
                "multiPoint": PluginSet(disabled=(names.DYNAMIC_RESOURCES,)),
                "filter": PluginSet(enabled=(PluginRef("FakeFilter"),)),
            }
        ),
        fake,
    )
    pod_info = PodInfo(make_pod("p").obj())
    state = CycleState()
    assert fw.run_pre_filter_plugins(state, pod_info) == SUCCESS
    assert state.skip_filter_plugins == {names.NODE_AFFINITY}
    filters = fw.filters(state)
    assert [name for name, _ in filters] == [
        "FakeFilter",
        names.NODE_UNSCHEDULABLE,
        names.NODE_NAME,
        names.TAINT_TOLERATION,
        names.NODE_RESOURCES_FIT,
    ]
    good, bad = (NodeInfo(make_node(n).obj()) for n in ("good", "bad"))
    assert [fn(state, pod_info, good) for _, fn in filters] == [SUCCESS] * 5
    assert filters[0][1](state, pod_info, bad) == Status(
        Code.UNSCHEDULABLE, ("injected filter status for bad",)
    )
    assert fake.calls == 2


def test_hint_map_collects_events_of_rejecting_plugins() -> None:
    fw = build(IN_TREE_WITHOUT_DRA)
    plugins = sorted({p for entries in fw.hint_map().values() for p, _ in entries})
    assert plugins == [
        names.NODE_AFFINITY,
        names.NODE_NAME,
        names.NODE_RESOURCES_FIT,
        names.NODE_UNSCHEDULABLE,
        names.TAINT_TOLERATION,
    ]


def two_of(plugin_type: type, point: str, first: Status, second: Status) -> tuple[Framework, list]:
    """A framework without DRA whose `point` runs two fakes of `plugin_type` in order."""
    fakes = [plugin_type(status=first, name="First"), plugin_type(status=second, name="Second")]
    profile = Profile(
        plugins={
            **NO_DRA,
            point: PluginSet(enabled=(PluginRef("First"), PluginRef("Second"))),
        }
    )
    return build(profile, *fakes), fakes


@pytest.mark.parametrize(
    ("first", "second", "want", "calls"),
    [
        pytest.param(SUCCESS, SUCCESS, SUCCESS, [1, 1], id="all-success"),
        pytest.param(
            Status.unschedulable("no"),
            SUCCESS,
            Status.unschedulable("no").with_plugin("First"),
            [1, 0],
            id="unschedulable-stops",
        ),
        pytest.param(
            Status.unresolvable("never"),
            SUCCESS,
            Status.unresolvable("never").with_plugin("First"),
            [1, 0],
            id="unresolvable-stops",
        ),
        pytest.param(
            Status.error("boom"),
            SUCCESS,
            Status.error('running PreFilter plugin "First": boom').with_plugin("First"),
            [1, 0],
            id="error-wrapped",
        ),
        pytest.param(Status.skip(), SUCCESS, SUCCESS, [1, 1], id="skip-continues"),
    ],
)
def test_pre_filter_runner(first: Status, second: Status, want: Status, calls: list[int]) -> None:
    fw, fakes = two_of(FakePreFilterPlugin, "preFilter", first, second)
    state = CycleState()
    assert fw.run_pre_filter_plugins(state, PodInfo(make_pod("p").obj())) == want
    assert [f.calls for f in fakes] == calls
    assert ("First" in state.skip_filter_plugins) == first.is_skip


@pytest.mark.parametrize(
    ("first", "second", "want", "calls"),
    [
        pytest.param(
            SUCCESS,
            Status.unschedulable("b"),
            SUCCESS.with_plugin("First"),
            [1, 0],
            id="success-stops",
        ),
        pytest.param(
            Status.unresolvable("a"),
            SUCCESS,
            Status.unresolvable("a").with_plugin("First"),
            [1, 0],
            id="unresolvable-stops",
        ),
        pytest.param(
            Status.error("a"),
            SUCCESS,
            Status.error("a").with_plugin("First"),
            [1, 0],
            id="error-aborts",
        ),
        pytest.param(
            Status.unschedulable("a"),
            SUCCESS,
            SUCCESS.with_plugin("Second"),
            [1, 1],
            id="unschedulable-continues",
        ),
        pytest.param(
            Status.unschedulable("a"),
            Status.unschedulable("b"),
            Status(Code.UNSCHEDULABLE, ("a", "b"), "First"),
            [1, 1],
            id="all-unschedulable-first-plugin-named",
        ),
    ],
)
async def test_post_filter_runner(
    first: Status, second: Status, want: Status, calls: list[int]
) -> None:
    fw, fakes = two_of(FakePostFilterPlugin, "postFilter", first, second)
    got = await fw.run_post_filter_plugins(CycleState(), PodInfo(make_pod("p").obj()), {})
    assert got == want
    assert [f.calls for f in fakes] == calls


def _dra_only_filter() -> Profile:
    return Profile(plugins={"filter": PluginSet(enabled=(PluginRef("FakeFilter"),))})


@pytest.mark.parametrize(
    ("profile", "extra", "want"),
    [
        pytest.param(
            Profile(),
            (),
            {
                "PodSchedulingContext": [SCHEDULING_CONTEXT_SELECTOR],
                "ResourceClaim": [CLAIM_SELECTOR],
            },
            id="dra-events-only",
        ),
        pytest.param(IN_TREE_WITHOUT_DRA, (), {}, id="without-dra-no-hint-has-one"),
        # A plugin without EventsToRegister is requeued by every event: no pod may be skipped.
        pytest.param(_dra_only_filter(), (FakeFilterPlugin(),), {}, id="wildcard-plugin"),
    ],
)
def test_hint_selectors_only_for_resources_whose_every_hint_has_one(
    profile: Profile, extra: tuple[object, ...], want: dict[str, list[object]]
) -> None:
    registry = new_in_tree_registry()
    merge(registry, registry_of(extra))
    listers = {
        rt: StaticLister([]) for rt in (RESOURCE_CLAIMS, RESOURCE_CLASSES, POD_SCHEDULING_CONTEXTS)
    }
    fw = Framework(profile=profile, registry=registry, handle=Handle(None, listers))  # type: ignore[arg-type]

    assert dict(sorted(fw.hint_selectors().items())) == want
