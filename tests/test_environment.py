"""environment.yml (conda users), pyproject.toml and requirements.lock name the same dependencies."""

import re
import tomllib

import yaml
from conftest import ROOT


def _name(req: str) -> str:
    return re.split(r"[<>=!~\[ ;]", req.strip(), maxsplit=1)[0].lower().replace("_", "-")


def test_environment_yml_matches_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = {_name(r) for r in project["dependencies"]} | {_name(r) for r in project["optional-dependencies"]["test"]}
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    conda = {_name(d) for d in env["dependencies"] if isinstance(d, str)} - {"python", "pip"}
    assert conda == wanted
    assert "python=3.11" in env["dependencies"]


def test_lock_pins_every_dependency_exactly():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    lines = [ln for ln in (ROOT / "requirements.lock").read_text().splitlines() if ln and not ln.startswith("#")]
    pinned = {}
    for line in lines:
        assert "==" in line, f"requirements.lock: {line!r} is not an exact pin"
        name, version = line.split("==")
        pinned[_name(name)] = version
    for dep in project["dependencies"] + project["optional-dependencies"]["test"]:
        assert _name(dep) in pinned, f"{dep} is in pyproject.toml but not pinned in requirements.lock"
