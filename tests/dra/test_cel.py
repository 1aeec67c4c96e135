"""Device-selector CEL: the DRA environment, errors, cost limit and the two caches."""

from __future__ import annotations

import pytest

from draplane.dra.cel import (
    ERR_COST_LIMIT,
    CELCompileError,
    CELRuntimeError,
    Compiler,
    SelectorCache,
    estimate_cost,
)
from draplane.testing.structured import make_device

D = "driver.example.com"
DEVICE = (
    make_device("gpu-0")
    .attr("model", "A100")
    .attr("numa", 1)
    .attr("healthy", True)
    .version_attr("driverVersion", "1.3.0-rc.1")
    .attr("other.example.com/zone", "z1")
    .capacity("memory", "80Gi")
    .capacity("cores", "1500m")
    .obj()
)
CACHE = SelectorCache(Compiler())

MATCHES = [
    ("driver", f'device.driver == "{D}"', True),
    ("string", f'device.attributes["{D}"].model == "A100"', True),
    ("string-other", f'device.attributes["{D}"].model == "H100"', False),
    ("int", f'device.attributes["{D}"].numa == 1', True),
    ("int-vs-double", f'device.attributes["{D}"].numa < 1.5', True),
    ("bool", f'device.attributes["{D}"].healthy', True),
    ("qualified-domain", 'device.attributes["other.example.com"].zone == "z1"', True),
    ("unknown-domain-is-empty", '"zone" in device.attributes["unknown.example.com"]', False),
    ("has-macro", f'has(device.attributes["{D}"].model)', True),
    ("has-missing", f'has(device.attributes["{D}"].missing)', False),
    ("quantity-compare", f'device.capacity["{D}"].memory.compareTo(quantity("40Gi")) >= 0', True),
    ("quantity-less", f'device.capacity["{D}"].memory.isLessThan(quantity("40Gi"))', False),
    ("quantity-equal", f'device.capacity["{D}"].memory == quantity("80Gi")', True),
    ("quantity-milli", f'device.capacity["{D}"].cores.isGreaterThan(quantity("1"))', True),
    (
        "quantity-arith",
        'quantity("1Gi").add(quantity("1Gi")).sub(1) == quantity("2147483647")',
        True,
    ),
    ("quantity-as-integer", f'device.capacity["{D}"].memory.asInteger() == 85899345920', True),
    ("quantity-is-integer", f'device.capacity["{D}"].cores.isInteger()', False),
    ("quantity-sign", 'quantity("-1").sign() == -1', True),
    ("quantity-float", 'quantity("1500m").asApproximateFloat() == 1.5', True),
    ("is-quantity", 'isQuantity("10Gi") && !isQuantity("ten")', True),
    (
        "semver-greater",
        f'device.attributes["{D}"].driverVersion.isGreaterThan(semver("1.2.0"))',
        True,
    ),
    (
        "semver-prerelease-lower",
        f'device.attributes["{D}"].driverVersion.isLessThan(semver("1.3.0"))',
        True,
    ),
    ("semver-parts", f'device.attributes["{D}"].driverVersion.minor() == 3', True),
    ("semver-equal", f'device.attributes["{D}"].driverVersion == semver("1.3.0-rc.1")', True),
    ("is-semver", 'isSemver("1.0.0") && !isSemver("v1.0.0")', True),
    ("regex", f'device.attributes["{D}"].model.matches("^A[0-9]+$")', True),
    ("strings-ext", f'device.attributes["{D}"].model.lowerAscii().startsWith("a1")', True),
    ("bind", f'cel.bind(a, device.attributes["{D}"], a.model == "A100" && a.numa == 1)', True),
    ("optional", f'device.attributes["{D}"].?missing.orValue("x") == "x"', True),
    ("lists", "[3, 1, 2].sum() == 6 && [1, 2].isSorted() && [4, 9].max() == 9", True),
    ("comprehension", 'device.attributes.exists(d, d == "other.example.com")', True),
    ("allow-multiple", "device.allowMultipleAllocations == false", True),
    ("field-name-in-a-string", '"device.foo" != device.driver', True),
]


@pytest.mark.parametrize(("expr", "want"), [m[1:] for m in MATCHES], ids=[m[0] for m in MATCHES])
def test_selector_matches(expr: str, want: bool) -> None:
    assert CACHE.matches(expr, D, DEVICE) is want


RUNTIME_ERRORS = [
    ("missing-attribute", f'device.attributes["{D}"].missing == 1', "no such key: missing"),
    ("missing-capacity", f'device.capacity["{D}"].gpus.isInteger()', "no such key: gpus"),
    (
        "not-bool",
        f'device.attributes["{D}"].model',
        "CEL result of type string could not be converted to bool",
    ),
    (
        "bad-quantity",
        'quantity("ten").sign() == 1',
        "quantities must match the regular expression "
        "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
    ),
    (
        "bad-semver",
        'semver("v1") == semver("1.0.0")',
        "Could not parse semver 'v1': invalid semantic version",
    ),
    ("divide-by-zero", "1 / 0 == 1", "divide by zero"),
]


@pytest.mark.parametrize(
    ("expr", "message"), [e[1:] for e in RUNTIME_ERRORS], ids=[e[0] for e in RUNTIME_ERRORS]
)
def test_selector_runtime_errors(expr: str, message: str) -> None:
    with pytest.raises(CELRuntimeError) as err:
        CACHE.matches(expr, D, DEVICE)
    assert str(err.value) == message


COMPILE_ERRORS = [
    (
        "syntax",
        "device.driver ==",
        "compilation failed: ERROR: <input>:1:17: Syntax error: mismatched input",
    ),
    (
        "undeclared",
        "gpu.model",
        "compilation failed: ERROR: <input>:1:4: undeclared reference to 'gpu.model'",
    ),
    ("not-bool", '"a" + "b"', "must evaluate to bool or the unknown type, not string"),
    ("driver-not-bool", "device.driver", "must evaluate to bool or the unknown type, not string"),
    (
        "attributes-indexed-by-bool",
        "device.attributes[true].someBoolean",
        "compilation failed: ERROR: <input>:1:18: found no matching overload for '_[_]' applied "
        "to '(map(string, map(string, any)), bool)'\n | device.attributes[true].someBoolean\n"
        " | .................^",
    ),
    (
        "unknown-device-field",
        'device.foo == "x"',
        "compilation failed: ERROR: <input>:1:7: undefined field 'foo'\n"
        ' | device.foo == "x"\n | ......^',
    ),
    (
        "driver-compared-to-int",
        "device.driver == 1",
        "compilation failed: ERROR: <input>:1:15: found no matching overload for '_==_' applied "
        "to '(string, int)'",
    ),
    (
        "too-long",
        "true || " * 1300 + "true",
        "compilation failed: expression too long (10404 > 10240 bytes)",
    ),
]


@pytest.mark.parametrize(
    ("expr", "prefix"), [e[1:] for e in COMPILE_ERRORS], ids=[e[0] for e in COMPILE_ERRORS]
)
def test_selector_compile_errors(expr: str, prefix: str) -> None:
    with pytest.raises(CELCompileError) as err:
        CACHE.matches(expr, D, DEVICE)
    assert str(err.value).startswith(prefix)


def test_bad_version_attribute_fails_every_selector() -> None:
    device = make_device("d").version_attr("driverVersion", "01.0.0").obj()
    with pytest.raises(CELRuntimeError) as err:
        CACHE.matches("true", D, device)
    assert str(err.value) == (
        "attribute driverVersion: parse semantic version: Could not parse semver '01.0.0': "
        "invalid semantic version"
    )


NESTED = "device.attributes.all(a, device.attributes.all(b, device.attributes.all(c, a != c)))"
WIDE = make_device("wide")
for _i in range(40):
    WIDE.attr(f"other.example.com/a{_i}", _i)


@pytest.mark.parametrize(
    ("limit", "device", "error"),
    [
        pytest.param(10_000, DEVICE, None, id="small-device-within-limit"),
        pytest.param(10_000, WIDE.obj(), ERR_COST_LIMIT, id="wide-device-over-limit"),
        pytest.param(1_000_000, WIDE.obj(), None, id="wide-device-default-limit"),
    ],
)
def test_runtime_cost_limit_uses_the_device_sizes(
    limit: int, device: dict[str, object], error: str | None
) -> None:
    # The estimate (32 entries a map) is far above 10,000; the runtime cost is taken with the
    # device's own sizes: 3 domains of at most 4 entries, or one domain of 40.
    assert estimate_cost(NESTED) > 32**3
    cache = SelectorCache(Compiler(cost_limit=limit))
    if error is None:
        assert cache.matches(NESTED, D, device) is False
    else:
        with pytest.raises(CELRuntimeError) as err:
            cache.matches(NESTED, D, device)
        assert str(err.value) == error
    assert cache.matches('device.driver != ""', D, device) is True


def test_cost_limit_on_validation() -> None:
    assert Compiler().validate(NESTED) is None
    five = "device.attributes.all(a, " * 5 + 'a.matches("x")' + ")" * 5
    assert Compiler().validate(five) == "cost exceeds budget by factor of more than 100x"


def test_each_expression_compiled_once_and_each_pair_evaluated_once() -> None:
    cache = SelectorCache(Compiler())
    expr = f'device.attributes["{D}"].model == "A100"'
    devices = [
        make_device(f"d{i}").attr("model", "A100" if i % 2 else "H100").obj() for i in range(4)
    ]
    for _ in range(3):
        assert [cache.matches(expr, D, d) for d in devices] == [False, True, False, True]
    assert cache.compiler.compilations == 1
    assert cache.evaluations == 4
    assert cache.compiled(expr).evaluations == 4


def test_changed_device_is_evaluated_again() -> None:
    cache = SelectorCache(Compiler())
    expr = f'device.attributes["{D}"].model == "A100"'
    old = make_device("d").attr("model", "A100").obj()
    assert cache.matches(expr, D, old) is True
    new = make_device("d").attr("model", "H100").obj()  # the informer delivers a new object
    assert cache.matches(expr, D, new) is False
    with pytest.raises(CELRuntimeError):  # in another driver's slice "model" is not D's
        cache.matches(expr, "other.example.com", new)
    assert cache.evaluations == 3


def test_runtime_errors_cached_but_compile_failures_not() -> None:
    cache = SelectorCache(Compiler())
    for _ in range(2):
        with pytest.raises(CELRuntimeError):
            cache.matches(f'device.attributes["{D}"].missing', D, DEVICE)
        with pytest.raises(CELCompileError):
            cache.matches("nope", D, DEVICE)
    assert cache.evaluations == 1
    assert cache.compiler.compilations == 3
