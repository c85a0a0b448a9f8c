"""Jupyter kernels that many processes can start at once without racing for TCP ports (python -m helpers classroom).

jupyter_client picks a kernel's five TCP ports by binding port 0 and letting go; two processes starting kernels in
the same instant can be handed the same free port, and then one kernel dies before replying or its client talks to
the other's kernel and waits ("Kernel didn't respond in 120 seconds"). A classroom starts 32 kernels at once. These
kernels use Unix sockets (ZeroMQ's ``ipc`` transport) in a folder of their own, so no two can collide.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from jupyter_client.manager import AsyncKernelManager
from traitlets import default

__all__ = ["SocketFolderKernelManager"]


class SocketFolderKernelManager(AsyncKernelManager):
    """An ``AsyncKernelManager`` whose kernel listens on Unix sockets in a new private folder, removed at shutdown."""

    @default("transport")
    def _default_transport(self) -> str:
        return "ipc"

    @default("ip")
    def _default_ip(self) -> str:
        # short (a socket path is at most 107 bytes) and private: /tmp/zck-XXXXXXXX/k-1 ... k-5
        self._socket_folder = tempfile.mkdtemp(prefix="zck-", dir="/tmp" if Path("/tmp").is_dir() else None)
        return str(Path(self._socket_folder) / "k")

    async def _async_cleanup_resources(self, restart: bool = False) -> None:
        await super()._async_cleanup_resources(restart=restart)
        folder = getattr(self, "_socket_folder", None)
        if folder and not restart:
            shutil.rmtree(folder, ignore_errors=True)
