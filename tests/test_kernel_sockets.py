"""Kernels that a classroom starts many at once: Unix sockets in folders of their own, none shared."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("nbclient")

from helpers.tools.kernel_sockets import SocketFolderKernelManager  # noqa: E402

RUN_ONE = textwrap.dedent("""
    import nbformat, sys
    from nbclient import NotebookClient
    from helpers.tools.kernel_sockets import SocketFolderKernelManager
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "from ipykernel.kernelapp import IPKernelApp as A; print(A.instance().transport, A.instance().ip)")])
    NotebookClient(nb, kernel_name="python3", kernel_manager_class=SocketFolderKernelManager,
                   startup_timeout=100).execute()
    print(nb.cells[0].outputs[0]["text"], end="")
""")


def test_two_managers_use_unix_sockets_in_different_private_folders():
    first, second = SocketFolderKernelManager(), SocketFolderKernelManager()
    assert first.transport == second.transport == "ipc"
    assert Path(first.ip).parent != Path(second.ip).parent
    for manager in (first, second):
        folder = Path(manager.ip).parent
        assert folder.is_dir() and folder.stat().st_mode & 0o077 == 0, "the socket folder is private"
        assert len(manager.ip) + 3 < 107, "a Unix socket path must fit in sun_path"
        folder.rmdir()


def test_kernels_started_at_once_by_several_processes_all_answer_and_leave_no_folder():
    before = set(Path("/tmp").glob("zck-*"))
    processes = [subprocess.Popen([sys.executable, "-c", RUN_ONE], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True) for _ in range(6)]
    answers = [process.communicate(timeout=240) for process in processes]
    for process, (out, err) in zip(processes, answers):
        assert process.returncode == 0, err[-2000:]
        transport, ip = out.split()
        assert transport == "ipc" and "/zck-" in ip
    assert len({out for out, _ in answers}) == len(processes), "each kernel has sockets of its own"
    assert set(Path("/tmp").glob("zck-*")) <= before, "the socket folders are removed at shutdown"
