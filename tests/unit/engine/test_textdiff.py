"""What a changed document (user data, a nodeup config) shows in the plan: its diff, secrets masked."""

from __future__ import annotations

import base64

import pytest

from ansible_collections.kubeops.kops.plugins.module_utils.engine import textdiff

KEY = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAtFPQq4fobC\nY2c4abc\n-----END RSA PRIVATE KEY-----"


@pytest.mark.parametrize("text, shown", [
    ("password: hunter2", "password: <masked>"),
    ('{"registryPassword": "hunter2", "user": "me"}', '{"registryPassword": "<masked>", "user": "me"}'),
    ("export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI", "export AWS_SECRET_ACCESS_KEY=<masked>"),
    ('password = "hunter2"', 'password = "<masked>"'),                  # containerd's TOML
    ("auth: dXNlcjpwYXNz", "auth: <masked>"),                           # a registry's auth
    ("token: abcdef.0123456789abcdef", "token: <masked>"),
    ("--token abcdef.0123456789abcdef", "--token <masked>"),            # a bootstrap token anywhere
    ("key id AKIAIOSFODNN7EXAMPLE here", "key id <masked> here"),
    ("tokenFile: /var/lib/kubelet/token", "tokenFile: /var/lib/kubelet/token"),  # no secret name: kept
    ("serverKey: /etc/kubernetes/server.key", "serverKey: /etc/kubernetes/server.key"),
    ("clientSecret: /srv/secret", "clientSecret: /srv/secret"),        # a path names where it is
    ("anonymousAuth: false", "anonymousAuth: false"),
    ("authorizationMode: Node,RBAC", "authorizationMode: Node,RBAC"),
    ("enableToken: true", "enableToken: true"),
    ("caCert: -----BEGIN CERTIFICATE-----", "caCert: -----BEGIN CERTIFICATE-----"),
    ("token = _get(IMDS)", "token = _get(IMDS)"),                       # code, not a value
])
def test_secrets_are_masked_and_the_rest_kept(text, shown):
    assert textdiff.masked(text) == shown


def test_a_private_key_is_masked_in_a_document_and_inside_a_json_string():
    assert textdiff.masked("key: |\n" + KEY + "\nnext: 1") == (
        "key: |\n-----BEGIN RSA PRIVATE KEY----- <masked> -----END RSA PRIVATE KEY-----\nnext: 1")
    assert "MIIEow" not in textdiff.masked('{"key": "%s"}' % KEY.replace("\n", "\\n"))


def test_user_data_is_read_through_its_base64_and_short_values_are_not_documents():
    script = "#!/bin/bash\necho hi\n"
    assert textdiff.as_text(base64.b64encode(script.encode()).decode()) == script
    assert textdiff.as_text(script) == script
    assert textdiff.as_text("t3.large") is None and textdiff.as_text("YWJj") is None and textdiff.as_text(5) is None


def test_a_change_of_a_masked_value_alone_is_said():
    assert textdiff.diff("password: a\n", "password: b\n") == ["(only masked values differ)"]


def test_long_lines_are_cut_unless_asked_for():
    before, after = "x\n" + "y" * 300 + "\n", "z\n" + "y" * 300 + "\n"
    assert textdiff.diff(before, after)[-1] == " " + "y" * 159 + "... (301 characters)"
    assert textdiff.diff(before, after, verbosity=2)[-1] == " " + "y" * 300
