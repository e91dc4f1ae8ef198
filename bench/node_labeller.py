"""From a node's registration to its labels, with the node labeller as the control plane runs it (by hand).

    cd /work/main && PYTHONPATH=build/collections:. ANSIBLE_COLLECTIONS_PATH=build/collections \\
        ANSIBLE_CONFIG=ansible.cfg .venv/bin/python bench/node_labeller.py [INTERVAL_SECONDS]
    (default: the production interval, 10 s)

A real etcd + kube-apiserver + kube-controller-manager (tests/realk8s/apiserver.py RealKubeAPIServer: Node,RBAC
authorization and the NodeRestriction admission plugin; the binaries `make k8s-binaries` builds, into
/var/cache/kubeops-kops/k8s: without them it stops and says so), EC2 in moto, the minimal-aws cluster's nodeup
configs (nodeconfig/config.py) in a file:// store, the labeller from its settings file as the unit starts it
(node_labeller.from_config, its own credential, RBAC from the node-labeller addon).  Nodes register with their
kubelet's own credential (only the labels NodeRestriction lets a kubelet set) at staggered moments within one
interval; prints the API server's start time, then per node how long until its instance-group label was there and
which field managers the Node's managedFields name.
"""

from __future__ import annotations

import os
import pathlib
import sys
import tempfile
import threading
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "build" / "collections"), str(REPO)]

import boto3  # noqa: E402

from ansible_collections.kubeops.kops.plugins.module_utils.nodeconfig import node_labels  # noqa: E402
from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import node_labeller  # noqa: E402
from tests import servers  # noqa: E402
from tests.integration import test_node_labeller as helpers  # noqa: E402
from tests.realk8s import apiserver, binaries  # noqa: E402

REGION = "us-east-1"
NODES = 4


def main(interval):
    build = binaries.cached_build()
    if build is None:
        raise SystemExit("the real Kubernetes components are not built: run `make k8s-binaries` "
                         "(hack/k8s_binaries.py; Go and the Go module proxy needed)")
    os.environ.update(AWS_ACCESS_KEY_ID="bench", AWS_SECRET_ACCESS_KEY="bench")  # the labeller's botocore session
    moto = servers.MotoServer().start()
    api = None
    workdir = pathlib.Path(tempfile.mkdtemp(prefix="bench-labeller-"))
    try:
        api = apiserver.RealKubeAPIServer(build=build).start()
        print("kube-apiserver %s at %s: started in %.1f s" % (api.version, api.url, api.start_seconds), flush=True)
        completed, groups = helpers._completed("minimal-aws")
        cluster = completed["metadata"]["name"]
        settings = node_labels.labeller_settings(completed, groups["master-us-test-1a"])
        paths = helpers._write_credentials(api, workdir, node_labeller.USER, ())
        settings.update(configBase=helpers._write_store(workdir, completed, groups), apiServer=api.url,
                        caCert=paths["ca"], clientCert=paths["cert"], clientKey=paths["key"], ec2Endpoint=moto.url,
                        region=REGION, intervalSeconds=interval)
        helpers._apply_rbac(api)
        ec2 = boto3.client("ec2", region_name=REGION, endpoint_url=moto.url, aws_access_key_id="bench",
                           aws_secret_access_key="bench")
        instances = [helpers._instance(ec2, cluster, "master-us-test-1a" if index == 0 else "nodes")
                     for index in range(NODES)]
        labeller = node_labeller.from_config(settings)
        stop = threading.Event()
        threading.Thread(target=labeller.run, args=(interval, stop), daemon=True).start()
        registered, labelled = {}, {}
        for index, (name, provider_id) in enumerate(instances):
            time.sleep(interval / NODES if index else 0.5)  # spread over one interval
            registered[name] = time.monotonic()
            helpers._register(api, workdir, name, provider_id)
        deadline = time.monotonic() + 3 * interval + 10
        while len(labelled) < NODES and time.monotonic() < deadline:
            for name in registered:
                if name not in labelled and "kops.k8s.io/instancegroup" in helpers._labels(api, name):
                    labelled[name] = time.monotonic() - registered[name]
            time.sleep(0.02)
        stop.set()
        print("labeller interval %.1f s, %d nodes" % (interval, NODES))
        for name, _provider in instances:
            node = api.get("v1", "Node", name)
            managers = sorted({f["manager"] for f in node["metadata"].get("managedFields") or []})
            print("  %s %-22s registration -> labelled %s  (field managers: %s)" % (
                name, node["metadata"]["labels"].get("kops.k8s.io/instancegroup", "-"),
                "%.2f s" % labelled[name] if name in labelled else "not labelled", ", ".join(managers)))
        return 0 if len(labelled) == NODES else 1
    finally:
        if api is not None:
            api.stop()
        moto.stop()


if __name__ == "__main__":
    sys.exit(main(float(sys.argv[1]) if len(sys.argv) > 1 else node_labels.LABELLER_INTERVAL_SECONDS))
