"""node_warm_pool against an instance metadata service on 127.0.0.1 (IMDSv2: a token first, then the value)."""

from __future__ import annotations

import http.server
import threading

import pytest

from ansible_collections.kubeops.kops.plugins.modules import node_warm_pool

CONFIG = {"WarmPoolImages": [], "kubeops": {"role": "Node", "cloud": {"provider": "aws", "region": "us-test-1"}}}


@pytest.fixture
def imds():
    """An IMDSv2 emulator; state["target"] is the target lifecycle state (None: the key does not exist)."""
    state = {"target": None, "asked": []}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_PUT(self):  # noqa: N802  # http.server's name
            if self.path == "/latest/api/token":
                return self._answer(200, "token-1")
            return self._answer(404, None)

        def do_GET(self):  # noqa: N802
            state["asked"].append((self.path, self.headers.get("X-aws-ec2-metadata-token")))
            if self.headers.get("X-aws-ec2-metadata-token") != "token-1":
                return self._answer(401, None)
            if self.path == "/latest/meta-data/autoscaling/target-lifecycle-state" and state["target"]:
                return self._answer(200, state["target"])
            return self._answer(404, None)

        def _answer(self, status, body):
            self.send_response(status)
            self.end_headers()
            if body is not None:
                self.wfile.write(body.encode())

        def log_message(self, *_args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    state["url"] = "http://127.0.0.1:%d" % server.server_address[1]
    yield state
    server.shutdown()
    server.server_close()


def test_warming_when_the_target_state_is_warmed(run_module, imds):
    imds["target"] = "Warmed:Stopped"
    result = run_module(node_warm_pool, nodeup_config=CONFIG, imds_endpoint=imds["url"])
    assert (result["mode"], result["target_lifecycle_state"]) == ("Warming", "Warmed:Stopped")
    assert imds["asked"] == [("/latest/meta-data/autoscaling/target-lifecycle-state", "token-1")]


def test_not_warming_in_service_or_outside_a_group(run_module, imds):
    imds["target"] = "InService"
    assert run_module(node_warm_pool, nodeup_config=CONFIG, imds_endpoint=imds["url"])["mode"] == ""
    imds["target"] = None  # the key is not there (404)
    assert run_module(node_warm_pool, nodeup_config=CONFIG, imds_endpoint=imds["url"])["mode"] == ""


def test_groups_without_a_warm_pool_and_the_control_plane_do_not_ask(run_module, imds):
    imds["target"] = "Warmed:Stopped"
    for config in ({"kubeops": CONFIG["kubeops"]}, dict(CONFIG, kubeops=dict(CONFIG["kubeops"], role="ControlPlane"))):
        assert run_module(node_warm_pool, nodeup_config=config, imds_endpoint=imds["url"])["mode"] == ""
    assert imds["asked"] == []


def test_no_lifecycle_hook_nothing_to_complete(run_module, imds):
    result = run_module(node_warm_pool, nodeup_config=CONFIG, action="complete", imds_endpoint=imds["url"])
    assert result["completed"] is False and not result["changed"] and imds["asked"] == []


def test_an_unreachable_metadata_service_fails_with_the_reason(run_module):
    result = run_module(node_warm_pool, nodeup_config=CONFIG, imds_endpoint="http://127.0.0.1:9")
    assert result["failed"] and "instance metadata (IMDSv2) did not answer" in result["msg"]
