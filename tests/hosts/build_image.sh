#!/usr/bin/env bash
# Build the test-host root filesystem once: Debian bookworm (minbase) with sshd, python3, systemd,
# and Debian's etcd/containerd/runc/CNI-plugin .debs in its apt cache so roles can install them offline.
# Usage: tests/hosts/build_image.sh TARGET_DIR   (built in TARGET_DIR.partial, renamed when complete)
set -o errexit -o nounset -o pipefail

target="$1"
partial="${target}.partial"
packages="openssh-server,python3,python3-apt,python3-venv,iproute2,iputils-ping,systemd,systemd-sysv,dbus,ca-certificates,curl,xz-utils,procps,kmod,iptables,e2fsprogs,mount,util-linux"
offline_debs=(etcd-server etcd-client containerd runc containernetworking-plugins python3-cryptography python3-yaml
              python3-boto3 unattended-upgrades)
mirror=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -1)
mirror=${mirror:-http://deb.debian.org/debian}

for tool in debootstrap systemd-nspawn ssh; do
  if ! command -v "$tool" >/dev/null; then
    apt-get install -y -q debootstrap systemd-container openssh-client >/dev/null
    break
  fi
done

rm -rf "$partial"
debootstrap --variant=minbase --include="$packages" bookworm "$partial" "$mirror"
# Keep the package lists and the downloaded .debs: hosts have no network.
chroot "$partial" apt-get update -q
chroot "$partial" apt-get install -y -q --download-only "${offline_debs[@]}"
rm -f "$partial"/etc/apt/apt.conf.d/docker-clean
chroot "$partial" systemctl enable ssh
# Host keys are made per host at start; a machine id per boot.
rm -f "$partial"/etc/ssh/ssh_host_* "$partial"/etc/machine-id
: > "$partial"/etc/machine-id
sed -i 's/^#\?PermitRootLogin.*/PermitRootLogin prohibit-password/' "$partial"/etc/ssh/sshd_config
# Units that cannot work in a container without a network (or are not needed) are masked.
for unit in systemd-networkd-wait-online.service systemd-timesyncd.service apt-daily.timer apt-daily-upgrade.timer \
            e2scrub_all.timer fstrim.timer getty@tty1.service console-getty.service systemd-resolved.service; do
  ln -sf /dev/null "$partial/etc/systemd/system/$unit"
done
mv "$partial" "$target"
