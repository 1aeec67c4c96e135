"""`example_controller`: the example driver wired into a `DriverController`, as `draplane driver
example` and `draplane up` run it (once per driver name; the benchmark runs two)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry

from draplane.client.interface import Client
from draplane.clock import REAL_CLOCK, Clock
from draplane.dra.controller import Delays, DriverController
from draplane.drivers.example._allocator import Resources
from draplane.drivers.example._driver import DRIVER_NAME, ExampleDriver


def example_controller(
    client: Client,
    *,
    driver_name: str = DRIVER_NAME,
    resources: Resources | None = None,
    clock: Clock = REAL_CLOCK,
    metrics: CollectorRegistry | None = None,
    workers: int = 5,
    delays: Delays | None = None,
) -> DriverController:
    driver = ExampleDriver(client, driver_name=driver_name, resources=resources)
    return DriverController(
        client, driver_name, driver, clock=clock, metrics=metrics, workers=workers, delays=delays
    )
