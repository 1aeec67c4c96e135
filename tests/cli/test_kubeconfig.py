"""`draplane kubeconfig --data-dir DIR --user USER`, run as the installed command against a
running API server: the printed kubeconfig is one kubectl uses as it is, and it authenticates
as USER (the scheduler lists nodes; a node is refused the claim list that NodeRestriction denies
to node users, which shows the server took the token for that node).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from draplane.apiserver import authn
from draplane.testing.commands import Commands
from draplane.testing.httpserver import HttpServer
from draplane.testing.kubectl import Kubectl, kubectl_binary

pytestmark = [pytest.mark.kubectl, pytest.mark.slow]


def kubectl_with(kubeconfig: Path, tmp_path: Path) -> Kubectl:
    binary = kubectl_binary("1.29") or kubectl_binary("1.32") or kubectl_binary("1.27")
    if binary is None:
        pytest.skip("no versioned kubectl binary installed")
    return Kubectl(binary, "1.29", kubeconfig, tmp_path / "kube-cache")


@pytest.mark.parametrize(
    ("user", "kubectl_args", "allowed"),
    [
        pytest.param("system:kube-scheduler", ("get", "nodes"), True, id="scheduler-lists-nodes"),
        pytest.param(
            "system:node:node-9",
            ("get", "resourceclaims"),
            False,
            id="node-may-not-list-claims",
        ),
    ],
)
async def test_printed_kubeconfig_works_with_kubectl(
    server: HttpServer,
    tmp_path: Path,
    user: str,
    kubectl_args: tuple[str, ...],
    allowed: bool,
) -> None:
    result = await Commands(tmp_path / "logs").run(
        "kubeconfig", "--data-dir", str(server.data_dir), "--user", user
    )
    assert (result.code, result.stderr) == (0, "")
    doc = yaml.safe_load(result.stdout)
    assert doc["current-context"] == "draplane"
    assert doc["users"][0]["name"] == user
    assert doc["clusters"][0]["cluster"]["server"] == server.url
    tokens = authn.parse_token_file((server.data_dir / "tokens").read_text())
    assert tokens[doc["users"][0]["user"]["token"]].name == user

    path = tmp_path / "user.kubeconfig"
    path.write_text(result.stdout)
    kubectl = kubectl_with(path, tmp_path)
    assert (await kubectl.run("config", "current-context")).strip() == "draplane"
    output = await kubectl.run(*kubectl_args, check=allowed)
    if not allowed:
        assert f'User "{user}" cannot list resource "resourceclaims"' in output
