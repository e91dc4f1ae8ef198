"""goyaml writes what kops' sigs.k8s.io/yaml.Marshal writes (go-yaml v2's encoder after a JSON round trip).

The expected texts are go-yaml's: its double quotes for strings that would read back as another type, its key
order, its literal blocks, libyaml's folding of long plain scalars; whole kops files are compared in
test_golden_control_plane.py."""

from __future__ import annotations

import pytest
import yaml

from ansible_collections.kubeops.kops.plugins.module_utils.errors import NodeError
from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import goyaml


@pytest.mark.parametrize("text, quoted", [
    ("", True), ("yes", True), ("On", True), ("n", True), ("NULL", True), ("~", True), ("<<", True),
    ("123", True), ("-1", True), ("0x1F", True), ("0o17", True), ("017", True), ("08", True), ("1e3", True),
    ("1_000", True), (".5", True), (".inf", True), ("-.Inf", True), ("2001-12-14", True),
    ("2001-12-14T21:59:43.1Z", True), ("1:20", True), ("0b101", True),
    ("150m", False), ("100Mi", False), ("v1.33.0", False), ("1.2.3", False),
    ("true-ish", False), ("nothing", False), ("0x", False), (".5x", False), ("+inf", False), ("10.0.0.0/8", False),
])
def test_strings_quoted_as_go_yaml_quotes_them(text, quoted):
    assert goyaml.resolves_to_non_string(text) is quoted
    written = goyaml.dumps({"k": text})
    assert written == ('k: "%s"\n' % text if quoted else "k: %s\n" % text)
    assert yaml.safe_load(written) == {"k": text}


def test_scalars_keys_and_blocks():
    document = {"b": [1, True, None, 0.5], "a10": {}, "a9": [], "A": "x: y", "_x": "- item", "m": "line 1\nline 2\n",
                "n": "no newline\nat the end", "e": "ends with colon:"}
    assert goyaml.dumps(document) == (
        "_x: '- item'\n"       # go-yaml: non-letters sort before letters
        "A: 'x: y'\n"          # not plain in YAML's syntax: single quotes, as libyaml
        "a9: []\n"             # runs of digits by value
        "a10: {}\n"
        "b:\n- 1\n- true\n- null\n- 0.5\n"   # sequences not indented under their key
        "e: 'ends with colon:'\n"
        "m: |\n  line 1\n  line 2\n"
        '"n": |-\n  no newline\n  at the end\n')  # a key that reads as a bool is quoted too


def test_long_plain_strings_fold_at_80_columns_as_go_yaml():
    words = " ".join(["word"] * 30)
    written = goyaml.dumps({"key": words})
    assert max(len(line) for line in written.splitlines()) <= 85 and written.count("\n") > 1
    assert yaml.safe_load(written) == {"key": words}


def test_not_json_fails_with_the_value():
    with pytest.raises(NodeError, match="cannot write"):
        goyaml.dumps({"k": object()})


def test_an_issued_kubeconfig_is_laid_out_as_kops_writes_it():
    """nodetasks.KubeConfig through kops.ToRawYaml: keys in go-yaml's order, []byte fields base64, no omitempty on
    kind, apiVersion and current-context (the webhook config for authentication.aws writes them empty)."""
    from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import kops_kubeconfig
    text = kops_kubeconfig.issued("kube-scheduler", "https://127.0.0.1", b"C", b"K", b"A")
    assert text == ("apiVersion: v1\nclusters:\n- cluster:\n    certificate-authority-data: QQ==\n"
                    "    server: https://127.0.0.1\n  name: local\ncontexts:\n- context:\n    cluster: local\n"
                    "    user: kube-scheduler\n  name: service-account-context\ncurrent-context: service-account-context\n"
                    "kind: Config\nusers:\n- name: kube-scheduler\n  user:\n    client-certificate-data: Qw==\n"
                    "    client-key-data: Sw==\n")
    assert kops_kubeconfig.credentials(text) == (b"C", b"K")
    assert kops_kubeconfig.credentials("users: []\n") == (None, None)
    webhook, mode = kops_kubeconfig.authn_config({"Authentication": {"aws": {}}}, "")
    assert mode == 0o600 and webhook.startswith('apiVersion: ""\nclusters:\n- cluster:\n    server: '
                                                'https://127.0.0.1:21362/authenticate\n  name: aws-iam-authenticator\n')
    assert 'kind: ""\nusers:\n- name: kube-apiserver\n  user: {}\n' in webhook
    assert kops_kubeconfig.authn_config({}, "") is None
