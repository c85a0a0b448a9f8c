"""A class on a JupyterHub (binder/jupyterhub/): the Zero to JupyterHub values file names what the chart expects,
the learner's server keeps `git status` clean after a save, and learners in pods that share only the lock folder
take turns on the GPU."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import nbformat
import pytest
import yaml

from tests.test_setup import LESSON, committed_bytes, git, make_repo

ROOT = Path(__file__).resolve().parents[1]
HUB = ROOT / "binder" / "jupyterhub"

# Keys of the chart's `singleuser` section used here, as the Zero to JupyterHub chart's schema names them
# (jupyterhub/schema.yaml of jupyterhub/zero-to-jupyterhub-k8s; https://z2jh.jupyter.org/en/stable/resources/reference.html).
SINGLEUSER_KEYS = {"image", "defaultUrl", "nodeSelector", "extraEnv", "storage", "extraFiles", "lifecycleHooks",
                   "profileList"}
STORAGE_KEYS = {"extraVolumes", "extraVolumeMounts"}
EXTRA_FILE_KEYS = {"mountPath", "stringData"}
PROFILE_KEYS = {"display_name", "description", "default", "kubespawner_override"}
# KubeSpawner traits a profile overrides (https://jupyterhub-kubespawner.readthedocs.io/en/latest/spawner.html)
OVERRIDES = {"extra_resource_limits", "environment"}


@pytest.fixture(scope="module")
def values() -> dict:
    return yaml.safe_load((HUB / "values.yaml").read_text())


def test_the_values_file_uses_only_keys_the_chart_expects(values):
    assert set(values) == {"singleuser"}
    user = values["singleuser"]
    assert set(user) <= SINGLEUSER_KEYS and set(user["storage"]) <= STORAGE_KEYS
    assert set(user["image"]) == {"name", "tag"} and isinstance(user["image"]["tag"], str)
    assert all(set(f) <= EXTRA_FILE_KEYS for f in user["extraFiles"].values())
    assert all(isinstance(v, str) for v in user["extraEnv"].values()), "the chart passes env values as strings"
    for profile in user["profileList"]:
        assert set(profile) <= PROFILE_KEYS and set(profile["kubespawner_override"]) <= OVERRIDES
    assert sum(bool(p.get("default")) for p in user["profileList"]) == 1
    assert set(user["lifecycleHooks"]) == {"postStart"} and user["lifecycleHooks"]["postStart"]["exec"]["command"]


def test_every_gpu_pod_shares_one_lock_folder_and_reads_the_instructor_s_record_read_only(values):
    from helpers.experiments.result import class_limit
    from helpers.sharing import class_record

    user = values["singleuser"]
    env = user["extraEnv"]
    volumes = {v["name"]: v for v in user["storage"]["extraVolumes"]}
    mounts = {m["mountPath"]: m for m in user["storage"]["extraVolumeMounts"]}
    locks = mounts[env["ZC_LOCK_DIR"]]
    assert not locks.get("readOnly") and volumes[locks["name"]]["hostPath"]["path"] == env["ZC_LOCK_DIR"]
    folder = str(Path(env[class_record.CLASS_RECORD]).parent)
    assert mounts[folder]["readOnly"] is True and env[class_record.READONLY] == "1"
    assert volumes[mounts[folder]["name"]]["hostPath"]["path"] == folder
    os.environ["ZC_CLASS_GPU_SECONDS"], old = env["ZC_CLASS_GPU_SECONDS"], os.environ.get("ZC_CLASS_GPU_SECONDS")
    try:
        assert class_limit() == float(env["ZC_CLASS_GPU_SECONDS"])
    finally:
        os.environ.pop("ZC_CLASS_GPU_SECONDS") if old is None else os.environ.update(ZC_CLASS_GPU_SECONDS=old)
    gpu = [p for p in user["profileList"] if p["kubespawner_override"]["extra_resource_limits"]]
    assert gpu and all(p["kubespawner_override"]["extra_resource_limits"] == {"nvidia.com/gpu": "1"} for p in gpu)
    replay = [p for p in user["profileList"] if not p["kubespawner_override"]["extra_resource_limits"]]
    assert all(p["kubespawner_override"]["environment"]["ZC_FORCE_REPLAY"] == "1" for p in replay)


def test_the_pods_get_the_server_configuration_beside_the_values_and_the_git_filter(values):
    user = values["singleuser"]
    [config] = user["extraFiles"].values()
    assert config["stringData"] == (HUB / "jupyter_server_config.py").read_text()
    assert config["mountPath"].endswith("/jupyter_server_config.py")
    assert ".ci/git-filter install" in user["lifecycleHooks"]["postStart"]["exec"]["command"][-1]


def _configured_hook(monkeypatch, without_the_course: bool = False):
    from traitlets.config.loader import PyFileConfigLoader

    if without_the_course:  # a server whose Python lacks the course: the hook comes from the clone
        monkeypatch.setitem(sys.modules, "helpers.tools.notebook_git", None)
        monkeypatch.setenv("ZC_COURSE_DIR", str(ROOT))
    return PyFileConfigLoader("jupyter_server_config.py", path=str(HUB)).load_config()


@pytest.mark.filterwarnings("ignore:Overriding existing post_save_hook")  # traitlets sets it once per config section
@pytest.mark.parametrize("without_the_course", [False, True])
def test_a_lesson_saved_by_the_hub_s_server_leaves_git_status_clean(tmp_path, monkeypatch, without_the_course):
    pytest.importorskip("jupyter_server", reason="the hub's server is jupyter_server (make setup installs it with "
                        "JupyterLab)")
    from jupyter_server.services.contents.largefilemanager import LargeFileManager

    repo = make_repo(tmp_path / "clone")
    (repo / ".gitignore").write_bytes(committed_bytes(ROOT, ".gitignore"))  # .ipynb_checkpoints/, as committed
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "add", ".gitignore")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "ignore")
    subprocess.run(["bash", str(repo / ".ci" / "git-filter"), "install", sys.executable], check=True,
                   capture_output=True)
    config = _configured_hook(monkeypatch, without_the_course)
    manager = LargeFileManager(config=config, root_dir=str(repo))  # the server's default contents manager
    assert callable(manager.post_save_hook)
    nb = nbformat.read(repo / "lessons" / LESSON, as_version=4)
    code = next(cell for cell in nb.cells if cell.cell_type == "code")
    code.outputs = [nbformat.v4.new_output("stream", name="stdout", text="live mode: NVIDIA H200\n")]
    code.execution_count = 1
    manager.save({"type": "notebook", "format": "json", "content": json.loads(nbformat.writes(nb))},
                 f"lessons/{LESSON}")
    assert "live mode" in (repo / "lessons" / LESSON).read_text(), "the learner's outputs are kept on disk"
    assert git(repo, "status", "--porcelain") == "", "the hub's post-save hook keeps git status clean"
    code.source += "\nprint('my own line')"
    manager.save({"type": "notebook", "format": "json", "content": json.loads(nbformat.writes(nb))},
                 f"lessons/{LESSON}")
    assert git(repo, "status", "--porcelain") == f" M lessons/{LESSON}\n", "a real change still shows"


def test_two_pods_with_their_own_tmp_and_one_shared_lock_folder_take_turns(tmp_path):
    """Two learners as two pods on one node: each its own /tmp (TMPDIR, HOME), only ZC_LOCK_DIR in common."""
    shared = tmp_path / "srv-zero-copy-locks"
    code = textwrap.dedent("""
        import json, sys, time
        from helpers.sharing.gpu_queue import measurement_slot
        spans = []
        for _ in range(6):
            with measurement_slot("gpu-0000-c1-00.0", what="pod"):
                start = time.monotonic()
                time.sleep(0.03)
                spans.append((start, time.monotonic()))
        print(json.dumps(spans))
    """)
    pods = []
    for name in ("pod-a", "pod-b"):
        own = tmp_path / name / "tmp"
        own.mkdir(parents=True)
        env = {**os.environ, "ZC_LOCK_DIR": str(shared), "TMPDIR": str(own), "HOME": str(tmp_path / name)}
        env.pop("ZC_QUEUE", None)
        pods.append(subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, cwd=str(ROOT)))
    spans = []
    for pod in pods:
        out, err = pod.communicate(timeout=60)
        assert pod.returncode == 0, err
        spans += [tuple(s) for s in json.loads(out)]
    spans.sort()
    assert len(spans) == 12
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:])), "two pods timed at the same moment"
    assert not any(any((tmp_path / name / "tmp").iterdir()) for name in ("pod-a", "pod-b")), "nothing in /tmp"
    assert any(shared.glob("gpu-0000-c1-00.0.*")), "the queue's files are in the shared folder"
