"""A non-editable install works: the wheel carries the dataset registry and the published
figures, and finds corpora through ``$STYLO_DATA`` from any folder."""

from __future__ import annotations

import json
import shutil
import site
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from conftest import missing

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"

_CHECK = """
import json, sys
import stylo, stylo.datasets as ds
from experiments.leaderboard import load_published
corpus = ds.load("federalist")
print(json.dumps({"stylo": stylo.__file__, "texts": len(corpus),
                  "registered": sorted(ds.registry()), "published": len(load_published())}))
"""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    src = tmp_path_factory.mktemp("src")
    # build from a copy, so the test leaves no build/ or egg-info in the checkout
    for name in ("stylo", "baselines", "experiments"):
        shutil.copytree(
            ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc")
        )
    for name in ("pyproject.toml", "README.md", "setup.cfg"):
        shutil.copy(ROOT / name, src / name)
    out = tmp_path_factory.mktemp("wheel")
    # pip's own build isolation: it brings the setuptools the project asks for, where the
    # environment's may be older (a new venv's) or absent
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(out), str(src)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    (path,) = out.glob("stylo-*.whl")
    return path


def test_wheel_ships_registry_and_published_figures(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "stylo/datasets/registry.json" in names
    assert "stylo/resources/function_words_en.txt" in names
    assert {"stylo/resources/published/aidbench.csv", "stylo/resources/published/pan.csv"} <= names


def test_installed_wheel_loads_a_dataset_from_another_folder(wheel, tmp_path):
    if not (DATA / "federalist").is_dir():
        missing(f"dataset 'federalist' not available: no federalist corpus under {DATA}")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    # the dependencies come from this interpreter's site-packages through a plain path line:
    # a .pth line adds a folder without running that folder's .pth files, so this
    # interpreter's editable install of stylo is not in the new environment
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    Path(purelib, "outer.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", str(wheel)],
        check=True,
        timeout=300,
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {"STYLO_DATA": str(DATA), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    done = subprocess.run(
        [str(python), "-c", _CHECK],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["stylo"].startswith(str(venv)), got["stylo"]
    assert got["texts"] == 85 and "imdb62" in got["registered"]
    assert got["published"] > 0
    listed = subprocess.run(
        [str(python), "-m", "stylo.datasets", "federalist"],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert listed.returncode == 0, listed.stderr
    (row,) = [
        line.replace("|", " ").split()
        for line in listed.stdout.splitlines()
        if "federalist" in line
    ]
    assert row[:3] == ["federalist", "texts", "ok"] and "85" in row
