"""`draplane driver-check`: a conformance harness for any DRA kubelet plugin registered with a
draplane node (or any kubelet directory laid out as kubelet's): it dials the plugin as kubelet
does and checks registration and version negotiation, the node's ResourceSlices, and
NodePrepareResources / NodeUnprepareResources on claims it creates and allocates itself
(idempotent, unknown claims, many claims per call, several requests with configs, CDI IDs
that resolve), plus, given `--plugin-command`, that a plugin killed during a prepare comes back
and prepares. One `CheckResult` per check with its evidence, in a `Report`."""

from draplane.drivercheck._checks import CHECKS, run_checks
from draplane.drivercheck._report import FAIL, PASS, SKIP, CheckResult, Report
from draplane.drivercheck._state import Options

__all__ = ["CHECKS", "FAIL", "PASS", "SKIP", "CheckResult", "Options", "Report", "run_checks"]
