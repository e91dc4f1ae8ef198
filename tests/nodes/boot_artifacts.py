"""What a fresh test host needs to boot from user data without a network: wheels, the collection, etcd.

Real nodes get the collection tarball and the pinned wheels from the state store, where update cluster
puts them (nodeconfig/boot_artifacts.py); the tests build the same with this checkout's collection and the
controller's wheel cache.  etcd: real nodes download etcd's release tarball, pinned in asset_data; test
hosts reach no release, so an etcd install override is built on the host from the Debian etcd packages
in the image's apt cache (deterministic tarball: the same sha256 on every host).
"""

from __future__ import annotations

import pathlib

from ansible_collections.kubeops.kops.plugins.module_utils.nodeconfig import boot_artifacts as artefacts
from ansible_collections.kubeops.kops.plugins.module_utils.statestore import vfs

REPO = pathlib.Path(__file__).resolve().parents[2]
ETCD_WORK = "/var/tmp/etcd-debian"
ETCD_TARBALL = r"""set -e
w=%(w)s; rm -rf "$w"; mkdir -p "$w/x"
for deb in /var/cache/apt/archives/etcd-server_*.deb /var/cache/apt/archives/etcd-client_*.deb; do dpkg-deb -x "$deb" "$w/x"; done
v=$("$w/x/usr/bin/etcd" --version | sed -n 's/^etcd Version: //p')
d="$w/etcd-v$v-linux-amd64"; mkdir -p "$d"; cp "$w/x/usr/bin/etcd" "$w/x/usr/bin/etcdctl" "$d/"
tar -C "$w" --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cf - "etcd-v$v-linux-amd64" | gzip -n > "$w/etcd.tar.gz"
echo "$v $(sha256sum "$w/etcd.tar.gz" | cut -d' ' -f1)"
"""


def wheelhouse():
    """The controller's cache of the pinned node wheels (boot_artifacts.NODE_REQUIREMENTS for every target)."""
    return artefacts.wheelhouse()


def collection_tarball(out_dir):
    """This checkout's collection as update cluster uploads it, written into out_dir; returns its path."""
    name, data = artefacts.collection_tarball(REPO)
    path = pathlib.Path(out_dir) / name
    path.write_bytes(data)
    return path


def upload_boot_artifacts(completed, config_base):
    """Put the pinned boot artefacts in a file:// store as update cluster does; (manifest URL, its sha256)."""
    boot = artefacts.build(completed, config_base, collection=artefacts.collection_tarball(REPO))
    boot.upload(vfs.open_store(boot.base))
    return boot.manifest_url, boot.manifest_sha256


def debian_etcd_install(host):
    """protokube_etcd_install_override for a test host: Debian's etcd (from the image's apt cache) as a tarball."""
    result = host.run(ETCD_TARBALL % {"w": ETCD_WORK})
    assert result.returncode == 0, result.stdout + result.stderr
    version, digest = result.stdout.split()[-2:]
    asset = "%s@file://%s/etcd.tar.gz" % (digest, ETCD_WORK)
    return {"version": version, "dir": "/opt/etcd-debian-v%s" % version, "assets": {"amd64": asset, "arm64": asset}}
