"""The structured allocator's claim features: constraints, firstAvailable, config, CEL errors."""

from __future__ import annotations

import pytest

from draplane.dra.structured import Features
from draplane.testing.allocatorcases import AllocatorCase, allocation, check_case
from draplane.testing.structured import (
    make_device,
    make_device_class,
    make_resource_slice,
    make_structured_claim,
    make_subrequest,
)

from .allocatorobjects import (
    CLASS_A,
    CLASS_B,
    CLASS_CONFIG,
    EVERYTHING,
    FULL,
    NOTHING,
    A,
    B,
    at_least,
    attrs,
    node_slice,
    opaque,
    res,
    two,
)

WIDE_SELECTOR = (
    f'cel.bind(d, device.attributes["{A}"], d.all(x, d.all(y, d.all(z, x != "" && y != ""))))'
)

CASES = [
    # --- constraints
    AllocatorCase(
        "with-constraint",
        claims=[
            make_structured_claim("claim-0")
            .request("req-0", "class-a")
            .request("req-1", "class-a")
            .match_attribute(EVERYTHING[0])
            .match_attribute(EVERYTHING[1])
            .match_attribute(EVERYTHING[2])
            .match_attribute(EVERYTHING[3])
            .obj()
        ],
        classes=[CLASS_A],
        slices=[node_slice(attrs("device-1", **FULL), attrs("device-2", **FULL))],
        expect=[allocation(res("req-0", "device-1"), res("req-1", "device-2"))],
    ),
    AllocatorCase(
        "with-constraint-non-existent-attribute",
        claims=[two(f"{A}/NonExistentAttribute")],
        classes=[CLASS_A],
        slices=[node_slice(attrs("device-1", **FULL), attrs("device-2", **FULL))],
        expect=None,
    ),
    *[
        AllocatorCase(
            f"with-constraint-not-matching-{kind}-attribute",
            claims=[two(f"{A}/{attr}")],
            classes=[CLASS_A],
            slices=[node_slice(attrs("device-1", **{attr: v1}), attrs("device-2", **{attr: v2}))],
            expect=None,
        )
        for kind, attr, v1, v2 in [
            ("int", "numa", 1, 2),
            ("string", "stringAttribute", "a", "b"),
            ("bool", "boolAttribute", True, False),
            ("version", "driverVersion", "1.0.0", "2.0.0"),
        ]
    ],
    AllocatorCase(
        "with-constraint-not-matching-int-attribute-all-devices",
        claims=[
            make_structured_claim("claim-0")
            .request("req-0", "class-a", mode="All")
            .match_attribute(f"{A}/numa")
            .obj()
        ],
        classes=[CLASS_A],
        slices=[node_slice(attrs("device-1", numa=1), attrs("device-2", numa=2))],
        error="claim default/claim-0, request req-0: cannot add device "
        f"{A}/pool-1/device-2 because "
        "a claim constraint would not be satisfied",
    ),
    AllocatorCase(
        "with-constraint-for-request",
        claims=[two(f"{A}/driverVersion", "req-0")],
        classes=[CLASS_A],
        slices=[
            node_slice(
                attrs("device-1", driverVersion="1.0.0"), attrs("device-2", driverVersion="2.0.0")
            )
        ],
        expect=[allocation(res("req-0", "device-1"), res("req-1", "device-2"))],
    ),
    AllocatorCase(
        "with-constraint-for-request-retry",
        claims=[
            make_structured_claim("claim-0")
            .request("req-0", "class-a")
            .request("req-1", "class-a")
            .match_attribute(f"{A}/driverVersion", "req-0")
            .match_attribute(f"{A}/stringAttribute")
            .obj()
        ],
        classes=[CLASS_A],
        slices=[
            node_slice(
                attrs("device-1", driverVersion="1.0.0", stringAttribute="a"),
                attrs("device-2", driverVersion="2.0.0", stringAttribute="b"),
                attrs("device-3", driverVersion="3.0.0", stringAttribute="b"),
            )
        ],
        expect=[allocation(res("req-0", "device-2"), res("req-1", "device-3"))],
    ),
    AllocatorCase(
        "match-attribute-of-other-domain-needs-qualified-name",
        claims=[two("other.example.com/numa")],
        classes=[CLASS_A],
        slices=[
            node_slice(
                attrs("device-1", numa=1), make_device("device-2").attr("other.example.com/numa", 1)
            )
        ],
        expect=None,
    ),
    AllocatorCase(
        "distinct-attribute",
        claims=[two(f"{A}/numa", kind="distinct")],
        classes=[CLASS_A],
        slices=[
            node_slice(
                attrs("device-1", numa=1), attrs("device-2", numa=1), attrs("device-3", numa=2)
            )
        ],
        expect=[allocation(res("req-0", "device-1"), res("req-1", "device-3"))],
    ),
    # --- firstAvailable
    AllocatorCase(
        "prioritized-list-disabled",
        features=Features(prioritized_list=False),
        claims=[
            make_structured_claim("claim-0")
            .first_available("req-0", make_subrequest("sub-0", "class-a"))
            .obj()
        ],
        classes=[CLASS_A],
        slices=[node_slice("device-1")],
        error="claim default/claim-0, request req-0: has subrequests, but the DRAPrioritizedList "
        "feature is disabled",
    ),
    AllocatorCase(
        "prioritized-list-fallback",
        claims=[
            make_structured_claim("claim-0")
            .first_available(
                "req-0", make_subrequest("sub-0", "nothing"), make_subrequest("sub-1", "class-a")
            )
            .obj()
        ],
        classes=[CLASS_A, NOTHING],
        slices=[node_slice("device-1")],
        expect=[allocation(res("req-0/sub-1", "device-1"))],
    ),
    AllocatorCase(
        "prioritized-list-with-backtracking",
        claims=[
            make_structured_claim("claim-0")
            .first_available(
                "req-0",
                make_subrequest("sub-0", "class-a", selectors=[at_least("8Gi")]),
                make_subrequest("sub-1", "class-a", selectors=[at_least("4Gi")]),
            )
            .request("req-1", "class-a", selectors=[at_least("8Gi")])
            .obj()
        ],
        classes=[CLASS_A],
        slices=[
            node_slice(make_device("device-1").capacity("memory", "8Gi")),
            node_slice(
                make_device("device-2").capacity("memory", "4Gi"), name="slice-2", pool="pool-2"
            ),
        ],
        expect=[
            allocation(res("req-0/sub-1", "device-2", pool="pool-2"), res("req-1", "device-1"))
        ],
    ),
    AllocatorCase(
        "prioritized-list-too-many-in-first-subrequest",
        claims=[
            make_structured_claim("claim-0")
            .first_available(
                "req-0",
                make_subrequest("sub-0", "class-b", count=500),
                make_subrequest("sub-1", "class-a"),
            )
            .obj()
        ],
        classes=[CLASS_A, CLASS_B],
        slices=[node_slice("device-1")],
        expect=[allocation(res("req-0/sub-1", "device-1"))],
    ),
    AllocatorCase(
        "prioritized-list-config-for-chosen-subrequest",
        claims=[
            make_structured_claim("claim-0")
            .first_available(
                "req-0", make_subrequest("sub-0", "nothing"), make_subrequest("sub-1", "class-a")
            )
            .request("req-1", "class-a")
            .config(A, {"for": "sub-0"}, "req-0/sub-0")
            .config(A, {"for": "sub-1"}, "req-0/sub-1")
            .config(A, {"for": "parent"}, "req-0")
            .obj()
        ],
        classes=[CLASS_A, NOTHING],
        slices=[node_slice("device-1", "device-2")],
        expect=[
            allocation(
                res("req-0/sub-1", "device-1"),
                res("req-1", "device-2"),
                config=[
                    {
                        "source": "FromClaim",
                        "requests": ["req-0/sub-1"],
                        **opaque({"for": "sub-1"}),
                    },
                    {"source": "FromClaim", "requests": ["req-0"], **opaque({"for": "parent"})},
                ],
            )
        ],
    ),
    AllocatorCase(
        "prioritized-list-second-request-at-result-cap",
        claims=[
            make_structured_claim("claim-0")
            .first_available(
                "req-0",
                make_subrequest("sub-0", "class-a", count=20),
                make_subrequest("sub-1", "class-a"),
            )
            .first_available(
                "req-1",
                make_subrequest("sub-0", "class-a", count=20),
                make_subrequest("sub-1", "class-a"),
            )
            .obj()
        ],
        classes=[CLASS_A],
        slices=[node_slice(*[f"device-{i:02d}" for i in range(40)])],
        expect=[
            allocation(
                *[res("req-0/sub-0", f"device-{i:02d}") for i in range(20)],
                res("req-1/sub-1", "device-20"),
            )
        ],
    ),
    AllocatorCase(
        "prioritized-list-earlier-request-shrinks-for-cap",
        claims=[
            make_structured_claim("claim-0")
            .first_available(
                "req-0",
                make_subrequest("sub-0", "class-a", count=20),
                make_subrequest("sub-1", "class-a"),
            )
            .request("req-1", "class-a", count=20)
            .obj()
        ],
        classes=[CLASS_A],
        slices=[node_slice(*[f"device-{i:02d}" for i in range(40)])],
        expect=[
            allocation(
                res("req-0/sub-1", "device-00"),
                *[res("req-1", f"device-{i:02d}") for i in range(1, 21)],
            )
        ],
    ),
    AllocatorCase(
        "prioritized-list-all-mode-subrequest",
        claims=[
            make_structured_claim("claim-0")
            .first_available(
                "req-0",
                make_subrequest("sub-0", "nothing", mode="All"),
                make_subrequest("sub-1", "class-a", mode="All"),
            )
            .obj()
        ],
        classes=[CLASS_A, NOTHING],
        slices=[node_slice("device-1", "device-2")],
        expect=[allocation(res("req-0/sub-1", "device-1"), res("req-0/sub-1", "device-2"))],
    ),
    # --- config
    AllocatorCase(
        "with-class-device-config",
        claims=[make_structured_claim("claim-0").request("req-0", "class-a").obj()],
        classes=[CLASS_CONFIG],
        slices=[node_slice("device-1")],
        expect=[
            allocation(
                res("req-0", "device-1"),
                config=[{"source": "FromClass", "requests": ["req-0"], **opaque({"a": "class"})}],
            )
        ],
    ),
    AllocatorCase(
        "with-class-device-config-for-a-subrequest",
        claims=[
            make_structured_claim("claim-0")
            .first_available(
                "req-0", make_subrequest("sub-0", "nothing"), make_subrequest("sub-1", "class-a")
            )
            .obj()
        ],
        classes=[CLASS_CONFIG, NOTHING],
        slices=[node_slice("device-1")],
        expect=[
            allocation(
                res("req-0/sub-1", "device-1"),
                config=[
                    {"source": "FromClass", "requests": ["req-0/sub-1"], **opaque({"a": "class"})}
                ],
            )
        ],
    ),
    AllocatorCase(
        "claim-config-naming-its-only-request-keeps-it",
        claims=[
            make_structured_claim("claim-0")
            .request("req-0", "class-a")
            .config(A, {"c": "1"}, "req-0")
            .obj()
        ],
        classes=[CLASS_A],
        slices=[node_slice("device-1")],
        expect=[
            allocation(
                res("req-0", "device-1"),
                config=[{"source": "FromClaim", "requests": ["req-0"], **opaque({"c": "1"})}],
            )
        ],
    ),
    AllocatorCase(
        "with-class-device-config-with-multiple-request-and-configs",
        claims=[
            make_structured_claim("claim-0")
            .request("req-0", "class-a")
            .request("req-1", "class-a")
            .request("req-2", "class-b")
            .obj()
        ],
        classes=[CLASS_CONFIG, make_device_class("class-b", B).config(B, {"b": "class"}).obj()],
        slices=[
            node_slice("device-0", "device-1"),
            make_resource_slice("slice-2", B, "pool-1").node("node-1").device("device-1").obj(),
        ],
        expect=[
            allocation(
                res("req-0", "device-0"),
                res("req-1", "device-1"),
                res("req-2", "device-1", driver=B),
                config=[
                    {
                        "source": "FromClass",
                        "requests": ["req-0", "req-1"],
                        **opaque({"a": "class"}),
                    },
                    {"source": "FromClass", "requests": ["req-2"], **opaque({"b": "class"}, B)},
                ],
            )
        ],
    ),
    AllocatorCase(
        "claim-with-device-config",
        claims=[
            make_structured_claim("claim-0").request("req-0", "class-a").config(A, {"c": "1"}).obj()
        ],
        classes=[CLASS_A],
        slices=[node_slice("device-1")],
        expect=[
            allocation(
                res("req-0", "device-1"), config=[{"source": "FromClaim", **opaque({"c": "1"})}]
            )
        ],
    ),
    # --- CEL errors are not non-matches
    AllocatorCase(
        "invalid-CEL-compile-error",
        claims=[
            make_structured_claim("claim-0")
            .request("req-0", "class-a", selectors=["noSuchVar"])
            .obj()
        ],
        classes=[CLASS_A],
        slices=[node_slice("device-1")],
        error="claim default/claim-0: selector #0: CEL compile error: compilation failed: ERROR: "
        "<input>:1:1: undeclared reference to 'noSuchVar' (in container '')\n | noSuchVar\n | ^",
    ),
    AllocatorCase(
        "CEL-runtime-error-even-if-another-device-matches",
        claims=[
            make_structured_claim("claim-0")
            .request("req-0", "class-a", selectors=[f'device.attributes["{A}"].model == "A100"'])
            .obj()
        ],
        classes=[CLASS_A],
        slices=[node_slice("device-1", attrs("device-2", model="A100"))],
        error="claim default/claim-0: selector #0: CEL runtime error: no such key: model",
    ),
    AllocatorCase(
        "CEL-guarded-selector-skips-device",
        claims=[
            make_structured_claim("claim-0")
            .request(
                "req-0",
                "class-a",
                selectors=[
                    f'"model" in device.attributes["{A}"] && '
                    f'device.attributes["{A}"].model == "A100"'
                ],
            )
            .obj()
        ],
        classes=[CLASS_A],
        slices=[node_slice("device-1", attrs("device-2", model="A100"))],
        expect=[allocation(res("req-0", "device-2"))],
    ),
    AllocatorCase(
        "class-CEL-runtime-error",
        claims=[make_structured_claim("claim-0").request("req-0", "class-x").obj()],
        classes=[
            make_device_class("class-x", A)
            .selector(f'device.capacity["{A}"].memory.isInteger()')
            .obj()
        ],
        slices=[node_slice("device-1")],
        error="class class-x: selector #1: CEL runtime error: no such key: memory",
    ),
    AllocatorCase(
        # Estimated at 32 attributes a domain the selector is within the limit (and passes
        # validation); at this device's 120 it costs more than CELSelectorExpressionMaxCost.
        "CEL-runtime-cost-limit-exceeded",
        claims=[
            make_structured_claim("claim-0")
            .request("req-0", "class-a", selectors=[WIDE_SELECTOR])
            .obj()
        ],
        classes=[CLASS_A],
        slices=[node_slice(attrs("device-1", **{f"a{i}": i for i in range(120)}))],
        error="claim default/claim-0: selector #0: CEL runtime error: "
        "operation cancelled: actual cost limit exceeded",
    ),
    AllocatorCase(
        # 27,000 comprehension iterations: within the cost limit, but beyond the 10,000 that
        # cel-expr-python runs in one evaluation; reported as the cost limit.
        "CEL-iteration-budget-exceeded",
        claims=[
            make_structured_claim("claim-0")
            .request("req-0", "class-a", selectors=[WIDE_SELECTOR])
            .obj()
        ],
        classes=[CLASS_A],
        slices=[node_slice(attrs("device-1", **{f"a{i}": i for i in range(30)}))],
        error="claim default/claim-0: selector #0: CEL runtime error: "
        "operation cancelled: actual cost limit exceeded",
    ),
    AllocatorCase(
        "CEL-runtime-cost-within-limit",
        claims=[
            make_structured_claim("claim-0")
            .request("req-0", "class-a", selectors=[WIDE_SELECTOR])
            .obj()
        ],
        classes=[CLASS_A],
        slices=[node_slice(attrs("device-1", **{f"a{i}": i for i in range(20)}))],
        expect=[allocation(res("req-0", "device-1"))],
    ),
    AllocatorCase(
        "admin-access-disabled",
        features=Features(admin_access=False),
        claims=[
            make_structured_claim("claim-0").request("req-0", "class-a", admin_access=True).obj()
        ],
        classes=[CLASS_A],
        slices=[node_slice("device-1")],
        error="claim default/claim-0, request req-0: admin access is requested, "
        "but the feature is disabled",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_allocator_features(case: AllocatorCase) -> None:
    check_case(case)
