# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The spec's hooks as systemd units, as kops' nodeup HookBuilder writes them.

The nodeup config carries Hooks as [instance group's hooks, cluster's hooks];
each becomes <name>.service (kops-hook-<n>-ig / kops-hook-<n> when unnamed; the
first of a name wins).  A hook is a raw unit (useRawManifest), a [Service]
section (manifest), or a container run with ctr (execContainer).  Disabled hooks
get no unit.
"""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.errors import NodeError

SAFE = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$%&()*+,-./:;<=>?@[]^_`{|}~")
CTR_MOUNTS = ("type=bind,src=/,dst=/rootfs,options=rbind:rslave",
              "type=bind,src=/var/run/dbus,dst=/var/run/dbus,options=rbind:rprivate",
              "type=bind,src=/run/systemd,dst=/run/systemd,options=rbind:rprivate")


def escape_arg(arg):
    """One argument of a systemd command line (kops' systemd.EscapeCommand)."""
    out, quote = [], False
    for char in arg:
        if char in SAFE:
            out.append(char)
        elif char == " ":
            quote = True
            out.append(char)
        elif char in "\"'\\":
            out.append("\\" + char)
        else:
            out.append("".join("\\x%02x" % b for b in char.encode("utf-8")))
    text = "".join(out)
    return '"%s"' % text if quote else text


def escape_command(argv):
    return " ".join(escape_arg(a) for a in argv)


def container_image(image):
    """docker.io/library/ and :latest where the image name leaves them out, as kops does."""
    image = image.strip()
    if "/" not in image:
        image = "docker.io/library/" + image
    if ":" not in image:
        image += ":latest"
    return image


def render_unit(sections):
    """[(section, [(key, value) or raw text])] -> unit text."""
    blocks = []
    for section, entries in sections:
        lines = ["[%s]" % section]
        for entry in entries:
            lines.append(entry if isinstance(entry, str) else "%s=%s" % entry)
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"


def hook_unit(name, hook):
    """The unit text of one hook, or None when it has nothing to run."""
    execute = hook.get("execContainer")
    if not execute and not hook.get("manifest"):
        return None
    if hook.get("useRawManifest"):
        return hook["manifest"]
    unit = [("Description", "Kops Hook %s" % name)]
    unit += [("Requires", x) for x in hook.get("requires") or []]
    unit += [("Before", x) for x in hook.get("before") or []]
    if not execute:
        return render_unit([("Unit", unit), ("Service", [hook["manifest"].rstrip("\n")])])
    if not (execute.get("image") or "").strip():
        raise NodeError("hooks[%s].execContainer.image is empty" % name, fix="name the image to run")
    image = container_image(execute["image"])
    run = ["/usr/bin/ctr", "--namespace", "k8s.io", "run", "--rm"]
    for mount in CTR_MOUNTS:
        run += ["--mount", mount]
    run += ["--net-host", "--privileged"]
    for key, value in sorted((execute.get("environment") or {}).items()):
        run += ["--env", "%s=%s" % (key, value)]
    run += [image, name] + list(execute.get("command") or [])
    unit.append(("Requires", "containerd.service"))
    service = [("ExecStartPre", escape_command(["/usr/bin/ctr", "--namespace", "k8s.io", "image", "pull", image])),
               ("ExecStart", escape_command(run)), ("Type", "oneshot")]
    return render_unit([("Unit", unit), ("Service", service), ("Install", [("WantedBy", "multi-user.target")])])


def hook_units(config):
    """[(unit name, unit text)] for the config's hooks, in kops' order and naming."""
    units, seen = [], set()
    for position, hooks in enumerate(config.get("Hooks") or []):
        for index, hook in enumerate(hooks or []):
            name = hook.get("name") or ("kops-hook-%d%s" % (index, "-ig" if position == 0 else ""))
            if name in seen:
                continue
            seen.add(name)
            if hook.get("enabled") is False or hook.get("disabled"):
                continue
            text = hook_unit(name, hook)
            if text is not None:
                units.append((name if name.endswith(".service") else name + ".service", text))
    return units
