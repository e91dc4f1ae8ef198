"""cloud/aws.py: the one client factory (credentials from the module's options, timeouts, clear errors)."""

from __future__ import annotations

import sys

import pytest

from ansible_collections.kubeops.kops.plugins.module_utils.cloud import aws, aws_facts
from ansible_collections.kubeops.kops.plugins.module_utils.statestore.s3 import S3Store
from tests import servers


def _clients():
    """One client from each place of the collection that talks to AWS."""
    return {
        "AwsCloud": aws.AwsCloud("k8s.example.com", "us-east-1").client("ec2"),
        "AwsCloudFacts": aws_facts.AwsCloudFacts("us-east-1")._client("ec2"),
        "S3Store": S3Store("s3://bucket", "bucket", "", endpoint="http://127.0.0.1:1")._client_for_test(),
        "client": aws.client("route53"),
    }


@pytest.fixture
def s3_store_client(monkeypatch):
    monkeypatch.setattr(S3Store, "_client_region", staticmethod(lambda: "us-east-1"))
    monkeypatch.setattr(S3Store, "_client_for_test", lambda self: self.client, raising=False)


def test_every_client_takes_the_configured_credentials_and_timeouts(monkeypatch, s3_store_client):
    monkeypatch.setenv("KOPS_AWS_CONNECT_TIMEOUT", "3")
    monkeypatch.setenv("KOPS_AWS_READ_TIMEOUT", "7")
    aws.configure({"access_key": "AKIDEXAMPLE", "secret_key": "example-secret", "session_token": "tok",
                   "region": "eu-west-1", "endpoint_url": "http://127.0.0.1:9"})
    for where, client in _clients().items():
        credentials = client._request_signer._credentials
        assert (credentials.access_key, credentials.secret_key, credentials.token) == (
            "AKIDEXAMPLE", "example-secret", "tok"), where
        assert (client.meta.config.connect_timeout, client.meta.config.read_timeout) == (3, 7), where
        if where != "S3Store":  # the store's own endpoint wins over the configured one
            assert client.meta.endpoint_url == "http://127.0.0.1:9", where


def test_default_timeouts():
    assert aws.timeouts() == {"connect_timeout": 10, "read_timeout": 20}


@pytest.mark.parametrize("value", ["0", "-1", "soon"])
def test_bad_timeout_names_the_variable(monkeypatch, value):
    monkeypatch.setenv("KOPS_AWS_READ_TIMEOUT", value)
    with pytest.raises(aws.AwsError, match="KOPS_AWS_READ_TIMEOUT=%r is not a positive number" % value):
        aws.timeouts()


def test_no_credentials_is_one_line_saying_what_to_set():
    with pytest.raises(aws.AwsError) as error:
        aws.client("ec2", region="us-east-1")
    message = str(error.value)
    assert "Unable to locate credentials" in message and "\n" not in message
    for what in ("access_key and secret_key", "AWS_ACCESS_KEY_ID", "profile", "AWS_PROFILE", "instance role"):
        assert what in message
    assert aws.has_credentials() is False


def test_a_missing_boto3_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "boto3", None)
    with pytest.raises(aws.AwsError, match=r"Failed to import the required Python library \(boto3 and botocore\)"
                                           r".*pip install boto3"):
        aws.client("ec2")
    assert aws.has_credentials() is False


def test_profile_and_keys_contradict():
    with pytest.raises(aws.AwsError, match="profile 'dev' and access_key"):
        aws.configure({"profile": "dev", "access_key": "AKIDEXAMPLE", "secret_key": "s"})
    with pytest.raises(aws.AwsError, match="access_key and secret_key go together"):
        aws.configure({"access_key": "AKIDEXAMPLE"})


def test_an_unknown_profile_is_named():
    aws.configure({"profile": "nosuchprofile"})
    with pytest.raises(aws.AwsError, match="nosuchprofile"):
        aws.client("ec2")


def test_options_follow_amazon_aws():
    """Names, aliases, env fallbacks and no_log as amazon.aws' doc fragment common (region: see AWS_ARGS)."""
    spec = aws.argument_spec({"own": {"type": "str"}})
    assert set(spec) == {"access_key", "secret_key", "session_token", "profile", "region", "endpoint_url", "own"}
    assert spec["access_key"]["aliases"] == ["aws_access_key_id", "aws_access_key"]
    assert spec["secret_key"]["no_log"] is True and spec["session_token"]["no_log"] is True
    assert spec["secret_key"]["fallback"][1] == ["AWS_SECRET_ACCESS_KEY", "AWS_SECRET_KEY"]
    assert spec["profile"]["fallback"][1] == ["AWS_PROFILE", "AWS_DEFAULT_PROFILE"]
    assert spec is not aws.AWS_ARGS and spec["access_key"] is not aws.AWS_ARGS["access_key"]


def test_a_node_module_takes_its_aws_options(run_module, aws, monkeypatch):
    """etcd_peers with credentials and endpoint as options only (none in the environment) reaches moto."""
    from ansible_collections.kubeops.kops.plugins.modules import etcd_peers
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL"):
        monkeypatch.delenv(key)
    config = {"ClusterName": "k8s.example.com", "kubeops": {"etcdClusters": [{"name": "main", "members": [
        {"name": "a", "instanceGroup": "control-plane-a"}]}]}}
    without = run_module(etcd_peers, nodeup_config=config, region="us-east-1", wait=0)
    assert without["failed"] is True and "no AWS credentials found" in without["msg"]
    found = run_module(etcd_peers, nodeup_config=config, wait=0, aws_region="us-east-1", aws_access_key_id="testing",
                       aws_secret_access_key="testing", endpoint_url=aws.url)
    # No instance exists: the call went through and found nobody (a credentials or endpoint error says otherwise).
    assert found["failed"] is True and found["missing"] == ["a"], found


@pytest.fixture
def html_endpoint():
    """An endpoint on 127.0.0.1 answering every request with an HTML page of the status the test sets."""
    import http.server
    answer = {"status": 500}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 - http.server's name
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            body = b"<!doctype html>\n<html lang=en>\n<title>Forbidden by policy</title>\n<h1>No</h1>\n"
            self.send_response(answer["status"])
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = servers.serve_in_thread(server, "html-endpoint")
    yield "http://127.0.0.1:%d" % server.server_port, answer
    servers.stop_serving(server, thread)
    server.server_close()


@pytest.mark.parametrize("status", [403, 200])
def test_a_page_that_is_not_an_aws_answer_names_the_call_without_the_page(html_endpoint, monkeypatch, status):
    """Not a 5xx (a proxy's refusal, a captive portal): botocore cannot parse it; the error is one AwsError naming the
    call, its region and endpoint, and the page's title."""
    url, answer = html_endpoint
    answer["status"] = status
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")
    monkeypatch.setattr(aws, "_settings", aws.settings())  # restored after the test
    aws.configure({"endpoint_url": url})
    with pytest.raises(aws.AwsError) as caught:
        aws.client("ec2", region="eu-west-1").describe_vpcs()
    assert str(caught.value) == (
        'EC2 DescribeVpcs in eu-west-1 at %s answered with an HTML page ("Forbidden by policy"), not an AWS answer: the '
        'endpoint or a proxy before it failed; try again, or check endpoint_url (or AWS_URL)' % url)
