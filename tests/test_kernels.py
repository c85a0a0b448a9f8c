"""helpers.kernels.source shows a whole .cu file, or only the kernels a lesson runs (lesson 06)."""

import pytest

from helpers import kernels


def test_named_kernels_come_whole_with_their_comment_and_nothing_else():
    shown = kernels.source("bandwidth", "read_float4_x4", "write_float4")
    assert shown.startswith("// Four independent 16-byte loads per iteration")
    assert [name for name in kernels.names("bandwidth") if f"void {name}(" in shown] == ["read_float4_x4", "write_float4"]
    assert shown.count("{") == shown.count("}") and shown.rstrip().endswith("}")
    assert "reread_cached" not in shown and "Lessons 06 and 08" not in shown   # no other kernel, no file header


def test_every_kernel_of_every_file_can_be_shown_alone():
    for stem in kernels.files():
        for name in kernels.names(stem):
            alone = kernels.source(stem, name)
            assert f"void {name}(" in alone and alone in kernels.source(stem) + "\n"
            assert alone.count("{") == alone.count("}")


def test_no_names_gives_the_whole_file_and_an_unknown_name_says_which_exist():
    assert kernels.source("bandwidth") == (kernels.KERNEL_DIR / "bandwidth.cu").read_text()
    with pytest.raises(KeyError, match="read_float4_x4"):
        kernels.source("bandwidth", "read_float8")
