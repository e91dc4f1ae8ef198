# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The one atomic file write of the collection: controller and node side use it (a leaf: it imports nothing of
the collection, so the node side may).

The content goes to a temporary file in the target's directory, which gets its mode, is flushed to disk and is
renamed over the target: a reader sees the old file or the new one, never half of one; a crash leaves at most
a ``.kubeops-*`` temporary, never a truncated target; a running binary replaced this way keeps its old inode.
"""

from __future__ import annotations

import os
import tempfile


def atomic_write(path, mode, content, dir_mode=0o755):
    """Write content at path with mode: bytes, text (UTF-8) or fill(handle), a function writing to the binary
    handle.  Missing parent directories are made with dir_mode."""
    directory = os.path.dirname(path) or "."
    os.makedirs(directory, mode=dir_mode, exist_ok=True)
    fd, temp = tempfile.mkstemp(dir=directory, prefix=".kubeops-")
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as handle:
            if callable(content):
                content(handle)
            else:
                handle.write(content.encode("utf-8") if isinstance(content, str) else content)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        if os.path.exists(temp):
            os.unlink(temp)
        raise
