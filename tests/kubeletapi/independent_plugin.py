"""A DRA kubelet plugin written without draplane's helper library: test data for the node's
kubelet side, standing in for a driver someone else wrote (a Go binary on upstream's
k8s.io/dynamic-resource-allocation/kubeletplugin).

It takes that helper's flags (`--plugin-registration-path`, `--plugin-data-dir`, `--cdi-dir`,
`--node-name`, `--kubeconfig`), serves `pluginregistration.Registration` and `v1.DRAPlugin`
straight from the generated protobuf modules with a synchronous grpcio server, talks to the API
server over HTTPS with the kubeconfig's bearer token and CA using only the standard library,
publishes one ResourceSlice for the node, writes one CDI spec per prepared claim (env edits)
and appends every call to `--calls-file` as one JSON line.

Run: `python independent_plugin.py --driver-name indep.example.com --node-name node-0 ...`.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import signal
import ssl
import tempfile
import threading
import urllib.request
from concurrent import futures
from pathlib import Path
from typing import Any

import grpc
import yaml

from draplane.kubeletapi import (
    dra_v1_pb2,
    dra_v1_pb2_grpc,
    pluginregistration_pb2,
    pluginregistration_pb2_grpc,
)


class API:
    """GET/POST/DELETE of JSON objects with a kubeconfig's first cluster and user."""

    def __init__(self, kubeconfig: Path) -> None:
        config = yaml.safe_load(kubeconfig.read_text())
        cluster = config["clusters"][0]["cluster"]
        self.server = str(cluster["server"]).rstrip("/")
        self.token = config["users"][0]["user"]["token"]
        self.context = ssl.create_default_context(
            cadata=base64.b64decode(cluster["certificate-authority-data"]).decode()
        )

    def call(self, method: str, path: str, body: Any = None) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(f"{self.server}{path}", data=data, method=method)
        request.add_header("Authorization", f"Bearer {self.token}")
        request.add_header("Accept", "application/json")
        if data is not None:
            request.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(request, context=self.context, timeout=30) as response:
            return json.loads(response.read())


class Plugin:
    def __init__(self, args: argparse.Namespace, api: API) -> None:
        self.args = args
        self.api = api
        self.lock = threading.Lock()
        self.kind = f"{args.driver_name}/dev"
        self.devices = [f"dev-{i}" for i in range(args.devices)]

    def record(self, call: str, claims: list[Any]) -> None:
        entry = {"call": call, "claims": [[c.namespace, c.name, c.uid] for c in claims]}
        with self.lock, open(self.args.calls_file, "a") as out:
            out.write(json.dumps(entry) + "\n")

    # pluginregistration.Registration
    def GetInfo(self, request: Any, context: Any) -> Any:
        return pluginregistration_pb2.PluginInfo(
            type="DRAPlugin",
            name=self.args.driver_name,
            endpoint=str(Path(self.args.plugin_data_dir) / "dra.sock"),
            supported_versions=["v1.DRAPlugin"],
        )

    def NotifyRegistrationStatus(self, request: Any, context: Any) -> Any:
        print(f"registration: registered={request.plugin_registered} error={request.error!r}")
        return pluginregistration_pb2.RegistrationStatusResponse()

    # v1.DRAPlugin
    def NodePrepareResources(self, request: Any, context: Any) -> Any:
        self.record("prepare", list(request.claims))
        response = dra_v1_pb2.NodePrepareResourcesResponse()
        for ref in request.claims:
            entry = response.claims[ref.uid]
            path = f"/apis/resource.k8s.io/v1/namespaces/{ref.namespace}/resourceclaims/{ref.name}"
            try:
                claim = self.api.call("GET", path)
            except OSError as err:
                entry.error = f"get claim {ref.namespace}/{ref.name}: {err}"
                continue
            if claim["metadata"]["uid"] != ref.uid:
                entry.error = f"claim {ref.name}: UID {claim['metadata']['uid']} != {ref.uid}"
                continue
            results = [
                r
                for r in claim["status"]["allocation"]["devices"]["results"]
                if r["driver"] == self.args.driver_name
            ]
            unknown = [r["device"] for r in results if r["device"] not in self.devices]
            if unknown:
                entry.error = f"claim {ref.name}: device {unknown[0]} is not allocatable"
                continue
            names = {r["device"]: f"{ref.uid}-{r['device']}" for r in results}
            self.write_spec(ref.uid, ref.name, names)
            for r in results:
                entry.devices.append(
                    dra_v1_pb2.Device(
                        request_names=[r["request"]],
                        pool_name=r["pool"],
                        device_name=r["device"],
                        cdi_device_ids=[f"{self.kind}={names[r['device']]}"],
                    )
                )
        return response

    def NodeUnprepareResources(self, request: Any, context: Any) -> Any:
        self.record("unprepare", list(request.claims))
        response = dra_v1_pb2.NodeUnprepareResourcesResponse()
        for ref in request.claims:
            self.spec_path(ref.uid).unlink(missing_ok=True)
            response.claims[ref.uid].error = ""
        return response

    def spec_path(self, uid: str) -> Path:
        return Path(self.args.cdi_dir) / f"{self.kind.replace('/', '-')}-{uid}.json"

    def write_spec(self, uid: str, claim_name: str, names: dict[str, str]) -> None:
        spec = {
            "cdiVersion": "0.6.0",
            "kind": self.kind,
            "containerEdits": {"env": [f"INDEP_CLAIM={claim_name}"]},
            "devices": [
                {"name": name, "containerEdits": {"env": [f"INDEP_DEVICE={device}"]}}
                for device, name in names.items()
            ],
        }
        target = self.spec_path(uid)
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".")
        with os.fdopen(fd, "w") as out:
            json.dump(spec, out)
        os.replace(tmp, target)

    def publish(self) -> None:
        node = self.api.call("GET", f"/api/v1/nodes/{self.args.node_name}")
        pool = self.args.node_name
        listed = self.api.call(
            "GET", f"/apis/resource.k8s.io/v1/resourceslices?fieldSelector=spec.nodeName%3D{pool}"
        )
        if any(s["spec"]["driver"] == self.args.driver_name for s in listed["items"]):
            print("ResourceSlice already published")  # a restart
            return
        self.api.call(
            "POST",
            "/apis/resource.k8s.io/v1/resourceslices",
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceSlice",
                "metadata": {
                    "generateName": f"{self.args.node_name}-{self.args.driver_name}-",
                    "ownerReferences": [
                        {
                            "apiVersion": "v1",
                            "kind": "Node",
                            "name": self.args.node_name,
                            "uid": node["metadata"]["uid"],
                            "controller": True,
                        }
                    ],
                },
                "spec": {
                    "driver": self.args.driver_name,
                    "nodeName": self.args.node_name,
                    "pool": {"name": pool, "generation": 1, "resourceSliceCount": 1},
                    "devices": [{"name": name} for name in self.devices],
                },
            },
        )
        print("published ResourceSlice")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--driver-name", required=True)
    parser.add_argument("--node-name", required=True)
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--plugin-registration-path", required=True)
    parser.add_argument("--plugin-data-dir", required=True)
    parser.add_argument("--cdi-dir", required=True)
    parser.add_argument("--calls-file", required=True)
    parser.add_argument("--devices", type=int, default=2)
    args = parser.parse_args()
    plugin = Plugin(args, API(Path(args.kubeconfig)))
    plugin.publish()

    dra_socket = Path(args.plugin_data_dir) / "dra.sock"
    reg_socket = Path(args.plugin_registration_path) / f"{args.driver_name}-reg.sock"
    servers = []
    for socket, add in (
        (dra_socket, dra_v1_pb2_grpc.add_DRAPluginServicer_to_server),
        (reg_socket, pluginregistration_pb2_grpc.add_RegistrationServicer_to_server),
    ):
        socket.parent.mkdir(parents=True, exist_ok=True)
        socket.unlink(missing_ok=True)
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        add(plugin, server)
        server.add_insecure_port(f"unix://{socket}")
        server.start()
        servers.append(server)
    print("serving", flush=True)

    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    stop.wait()
    for server, socket in zip(reversed(servers), (reg_socket, dra_socket), strict=True):
        server.stop(1).wait()
        socket.unlink(missing_ok=True)


if __name__ == "__main__":
    main()
