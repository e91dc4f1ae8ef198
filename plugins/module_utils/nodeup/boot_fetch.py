# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The boot script's downloader: the node's own python3 and nothing else (stdlib only).

Embedded in the user data (nodeconfig/bootstrap.py) and run before any venv
exists, so it cannot use boto3: it reads file://, http(s)://, s3:// (AWS
Signature V4 with the instance profile's credentials from IMDSv2, or the
AWS_* environment) and gs:// (the metadata server's token) itself, as kops'
nodeup reads its store with its own clients.  Every file is checked against
its sha256 before it is written under its name; a mismatch is refused.

    python3 boot_fetch.py file URL SHA256 DEST
    python3 boot_fetch.py manifest URL SHA256 DIR   # the boot manifest and every artefact it lists for this node
"""

from __future__ import annotations

import datetime
import hashlib
import hmac
import json
import os
import platform
import sys
import urllib.parse
import urllib.request

IMDS = "http://169.254.169.254"
GCE_TOKEN = "http://metadata.google.internal/computeMetadata/v1/instance/service-accounts/default/token"


class Refused(Exception):
    """A download that is not what the manifest pinned."""


def _get(url, headers=None, method="GET", timeout=30):
    request = urllib.request.Request(url, headers=headers or {}, method=method)
    with urllib.request.urlopen(request, timeout=timeout) as response:  # nosec: URLs come from our own user data
        return response.read()


def aws_credentials():
    """(access key, secret key, session token): the environment's, else the instance profile's (IMDSv2)."""
    if os.environ.get("AWS_ACCESS_KEY_ID"):
        return os.environ["AWS_ACCESS_KEY_ID"], os.environ["AWS_SECRET_ACCESS_KEY"], os.environ.get("AWS_SESSION_TOKEN")
    token = _get(IMDS + "/latest/api/token", {"X-aws-ec2-metadata-token-ttl-seconds": "300"}, "PUT").decode()
    headers = {"X-aws-ec2-metadata-token": token}
    role = _get(IMDS + "/latest/meta-data/iam/security-credentials/", headers).decode().split()[0]
    document = json.loads(_get(IMDS + "/latest/meta-data/iam/security-credentials/" + role, headers))
    return document["AccessKeyId"], document["SecretAccessKey"], document.get("Token")


def _hmac(key, text):
    return hmac.new(key, text.encode(), hashlib.sha256).digest()


def s3_request(bucket, key, region, credentials, endpoint=None, now=None):
    """(URL, headers) of a SigV4-signed GET of s3://bucket/key (path-style, so any bucket name works)."""
    access, secret, token = credentials
    base = (endpoint or "https://s3.%s.amazonaws.com" % region).rstrip("/")
    host = urllib.parse.urlsplit(base).netloc
    path = "/%s/%s" % (bucket, urllib.parse.quote(key, safe="/~"))
    stamp = (now or datetime.datetime.now(datetime.timezone.utc)).strftime("%Y%m%dT%H%M%SZ")
    headers = {"host": host, "x-amz-content-sha256": hashlib.sha256(b"").hexdigest(), "x-amz-date": stamp}
    if token:
        headers["x-amz-security-token"] = token
    names = sorted(headers)
    canonical = "\n".join(["GET", urllib.parse.quote(path, safe="/~%"), ""] + ["%s:%s" % (n, headers[n]) for n in names]
                          + ["", ";".join(names), headers["x-amz-content-sha256"]])
    scope = "%s/%s/s3/aws4_request" % (stamp[:8], region)
    to_sign = "\n".join(["AWS4-HMAC-SHA256", stamp, scope, hashlib.sha256(canonical.encode()).hexdigest()])
    key_ = _hmac(_hmac(_hmac(_hmac(("AWS4" + secret).encode(), stamp[:8]), region), "s3"), "aws4_request")
    signature = hmac.new(key_, to_sign.encode(), hashlib.sha256).hexdigest()
    headers["Authorization"] = "AWS4-HMAC-SHA256 Credential=%s/%s, SignedHeaders=%s, Signature=%s" % (
        access, scope, ";".join(names), signature)
    del headers["host"]
    return base + path, headers


def read(url):
    """The bytes at a store or repository URL."""
    scheme, _sep, rest = url.partition("://")
    if scheme == "file":
        with open(rest, "rb") as handle:
            return handle.read()
    if scheme in ("http", "https"):
        return _get(url, timeout=300)
    bucket, _sep, key = rest.partition("/")
    if scheme == "s3":
        region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1"
        endpoint = os.environ.get("S3_ENDPOINT") or os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")
        target, headers = s3_request(bucket, key, region, aws_credentials(), endpoint)
        return _get(target, headers, timeout=300)
    if scheme == "gs":
        emulator = os.environ.get("STORAGE_EMULATOR_HOST")
        headers = {}
        if not emulator:
            token = json.loads(_get(GCE_TOKEN, {"Metadata-Flavor": "Google"}))["access_token"]
            headers = {"Authorization": "Bearer " + token}
        base = (emulator or "https://storage.googleapis.com").rstrip("/")
        return _get("%s/storage/v1/b/%s/o/%s?alt=media" % (base, bucket, urllib.parse.quote(key, safe="")),
                    headers, timeout=300)
    raise Refused("unsupported URL %s (file://, http(s)://, s3:// or gs://)" % url)


def fetch(url, sha256, dest):
    """Download url to dest if its sha256 is the pinned one; a mismatch writes nothing and is refused."""
    if os.path.exists(dest) and _sha256_file(dest) == sha256:
        return
    data = read(url)
    actual = hashlib.sha256(data).hexdigest()
    if actual != sha256:
        raise Refused("%s has sha256 %s, not the pinned %s: refused" % (url, actual, sha256))
    partial = dest + ".partial"
    with open(partial, "wb") as handle:
        handle.write(data)
    os.replace(partial, dest)


def _sha256_file(path):
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def wheel_fits(filename, python=None, machine=None):
    """Whether a wheel (PEP 427 name) installs on this interpreter and machine: what pip would pick from the set."""
    python = python or sys.version_info[:2]
    machine = machine or platform.machine()
    python_tags, abi_tag, platform_tag = filename[:-len(".whl")].split("-")[-3:]
    if platform_tag != "any" and not platform_tag.endswith(machine):
        return False
    for tag in python_tags.split("."):
        if tag in ("py3", "py%d%d" % python, "cp%d%d" % python):
            return True
        if abi_tag == "abi3" and tag.startswith("cp3") and int(tag[3:]) <= python[1]:
            return True
    return False


def fetch_manifest(url, sha256, directory):
    """The boot manifest (pinned by its sha256) and each artefact it lists for this node, into directory."""
    os.makedirs(os.path.join(directory, "wheels"), exist_ok=True)
    manifest_path = os.path.join(directory, "manifest.json")
    fetch(url, sha256, manifest_path)
    with open(manifest_path, encoding="utf-8") as handle:
        manifest = json.load(handle)
    base = manifest["base"]
    collection = manifest["collection"]
    fetch("%s/%s" % (base, collection["path"]), collection["sha256"], os.path.join(directory, "collection.tar.gz"))
    wheels = [w for w in manifest["wheels"] if wheel_fits(w["file"])]
    if not wheels:
        raise Refused("no wheel in %s fits Python %d.%d on %s" % (url, sys.version_info[0], sys.version_info[1],
                                                                  platform.machine()))
    for wheel in wheels:
        fetch("%s/%s" % (base, wheel["path"]), wheel["sha256"], os.path.join(directory, "wheels", wheel["file"]))


def main(argv):
    if len(argv) != 5 or argv[1] not in ("file", "manifest"):
        sys.stderr.write("usage: boot_fetch.py file|manifest URL SHA256 DEST\n")
        return 2
    try:
        if argv[1] == "file":
            fetch(argv[2], argv[3], argv[4])
        else:
            fetch_manifest(argv[2], argv[3], argv[4])
    except Refused as exc:
        sys.stderr.write("kubeops boot: %s\n" % exc)
        return 3
    except (OSError, ValueError, KeyError) as exc:
        sys.stderr.write("kubeops boot: %s: %s\n" % (argv[2], exc))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))  # pylint: disable=ansible-bad-function  # a program on the node, never a module
