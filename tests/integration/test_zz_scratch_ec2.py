from tests.integration.test_aws_update import _service, _update, ADMIN_KEY, _mutating

def test_scratch(aws, tmp_path):
    service = _service("file://%s" % tmp_path, topology="private", zones=["us-east-1a", "us-east-1b"])
    _update(service, ssh_public_key=ADMIN_KEY)
    again, plan, calls = _update(service)
    for e in plan:
        if e.action != "unchanged":
            print(e.kind, e.name, e.action, e.changes)
    print(dict(calls))
    assert 0
