"""Walking and reading the inputs: the same rules at any depth, every skipped path a files.csv row with its reason,
manifest.yaml read, a UTF-8 byte-order mark accepted by every reader, YAML alias bombs refused."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, TEST_DATA

from analysis.ingest import formats, ingest
from analysis.ingest.manifest import ManifestError

RUN = TEST_DATA / "formats" / "vllm" / "fork_gptoss_conc4.json"
OTHER = TEST_DATA / "formats" / "vllm" / "fork_kimi_mtp_conc32.json"


def _skipped(result) -> dict[str, str]:
    files = result.files
    rows = files[files["status"] == "skipped"]
    return dict(zip(rows["source_file"], rows["note"]))


def test_a_hidden_folder_above_the_given_path_does_not_skip_everything(tmp_path):
    src = tmp_path / ".cache" / "runs"
    src.mkdir(parents=True)
    shutil.copy(RUN, src / "run.json")
    result = ingest([src])
    assert len(result.points) == 1 and list(result.files["status"]) == ["points"]


def test_hidden_names_inside_are_skipped_with_a_row_saying_so(tmp_path):
    src = tmp_path / "raw"
    (src / ".git").mkdir(parents=True)
    (src / "deep" / ".scratch").mkdir(parents=True)
    shutil.copy(RUN, src / ".git" / "run.json")
    shutil.copy(RUN, src / "deep" / ".scratch" / "run.json")
    shutil.copy(RUN, src / "deep" / ".hidden.json")
    shutil.copy(OTHER, src / "deep" / "run.json")
    result = ingest([src])
    assert list(result.points["source_file"]) == ["raw/deep/run.json"]
    assert _skipped(result) == {
        "raw/.git": "hidden folder (name starts with '.'), not read",
        "raw/deep/.hidden.json": "hidden file (name starts with '.'), not read",
        "raw/deep/.scratch": "hidden folder (name starts with '.'), not read",
    }
    assert "skipped" not in set(result.summary()["format"])  # the per-tool table counts files that were read


def test_symlinks_and_special_files_are_rows_with_their_reason(tmp_path):
    src = tmp_path / "raw"
    (src / "sub").mkdir(parents=True)
    shutil.copy(RUN, src / "real.json")
    os.symlink(src / "real.json", src / "a_link_to_file.json")  # read, like the file (so: a duplicate run)
    os.symlink(src / "missing.json", src / "broken.json")
    os.symlink(src / "loop_a", src / "loop_b")
    os.symlink(src / "loop_b", src / "loop_a")
    os.symlink(src, src / "sub" / "up")  # a folder loop if followed
    os.mkfifo(src / "pipe.json")
    result = ingest([src])  # returns: the FIFO is never opened, the loop never walked
    assert _skipped(result) == {
        "raw/broken.json": "broken symlink (its target does not exist), not read",
        "raw/loop_a": "symlink loop, not read",
        "raw/loop_b": "symlink loop, not read",
        "raw/pipe.json": "not a regular file (FIFO (named pipe)), not read",
        "raw/sub/up": "symlink to a folder, not followed (avoids loops and reading a tree twice)",
    }
    status = dict(zip(result.files["source_file"], result.files["status"]))
    assert status["raw/a_link_to_file.json"] == "points" and status["raw/real.json"] == "quarantined"
    assert "duplicate run" in result.quarantine.set_index("source_file").loc["raw/real.json", "reason"]


def test_a_folder_that_cannot_be_listed_is_a_row(tmp_path, monkeypatch):
    src = tmp_path / "raw"
    (src / "locked").mkdir(parents=True)
    shutil.copy(RUN, src / "locked" / "run.json")
    shutil.copy(OTHER, src / "run.json")
    if hasattr(os, "geteuid") and os.geteuid() == 0:  # root lists any folder: refuse it the way the OS would
        real = os.scandir

        def scandir(path):
            if Path(path).name == "locked":
                raise PermissionError(13, "Permission denied", str(path))
            return real(path)

        monkeypatch.setattr(os, "scandir", scandir)
    (src / "locked").chmod(0)
    try:
        result = ingest([src])
    finally:
        (src / "locked").chmod(0o755)
    assert len(result.points) == 1
    assert _skipped(result) == {"raw/locked": "cannot list folder: Permission denied"}


def test_manifest_yaml_is_read_like_manifest_yml(tmp_path):
    src = tmp_path / "raw"
    src.mkdir()
    shutil.copy(RUN, src / "run.json")
    (src / "manifest.yaml").write_text("files:\n  - glob: '*.json'\n    hardware: H200 SXM\n    n_gpus: 8\n")
    result = ingest([src])
    assert result.points.iloc[0]["hardware"] == "H200 SXM" and result.points.iloc[0]["n_gpus"] == 8
    assert _skipped(result) == {"raw/manifest.yaml": "manifest (read for what the logs lack), not a log"}


def _example_files() -> list[Path]:
    return [ROOT / f.example for f in formats() if (ROOT / f.example).is_file()]


def test_a_byte_order_mark_is_accepted_by_every_reader(tmp_path):
    examples = _example_files()
    assert len(examples) >= 20
    for i, example in enumerate(examples):
        plain = tmp_path / "plain" / str(i) / example.parent.name / example.name
        bom = tmp_path / "bom" / str(i) / example.parent.name / example.name
        for path, prefix in ((plain, b""), (bom, b"\xef\xbb\xbf")):
            path.parent.mkdir(parents=True)
            path.write_bytes(prefix + example.read_bytes())
        expected, got = ingest([plain]), ingest([bom])
        assert list(got.files["format"]) == list(expected.files["format"]), example
        assert len(got.points) == len(expected.points) > 0 or len(got.requests) == len(expected.requests) > 0, example
        cols = ["output_tok_s", "tpot_ms_p50", "step_ms", "model"]
        assert got.points[cols].equals(expected.points[cols]), example


BOMB = "\n".join(
    [f'a: &a [{",".join(["lol"] * 9)}]']
    + [f"{c}: &{c} [{','.join(['*' + p] * 9)}]" for p, c in zip("abcdefgh", "bcdefghi")]
) + "\nfiles: []\n"


def test_a_yaml_alias_bomb_is_refused_with_a_clear_message(tmp_path):
    src = tmp_path / "raw"
    src.mkdir()
    shutil.copy(RUN, src / "run.json")
    (src / "manifest.yml").write_text(BOMB)
    with pytest.raises(ManifestError, match="alias bomb"):
        ingest([src])
    run = subprocess.run([sys.executable, "-m", "analysis.cli", "ingest", str(src), "--out", str(tmp_path / "out")],
                         capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert run.returncode == 2 and "alias bomb" in run.stderr and len(run.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_a_manifest_with_a_few_anchors_still_loads(tmp_path):
    src = tmp_path / "raw"
    src.mkdir()
    shutil.copy(RUN, src / "run.json")
    (src / "manifest.yml").write_text("common: &h200 {hardware: H200 SXM, n_gpus: 8}\n"
                                      "files:\n  - glob: '*.json'\n    <<: *h200\n")
    assert ingest([src]).points.iloc[0]["hardware"] == "H200 SXM"
