"""environment.yml and pyproject.toml must install the same packages, and the pins must satisfy the ranges."""

import re

import pytest
import tomllib
import yaml
from helpers import ROOT
from packaging.requirements import Requirement


def _pyproject_requirements() -> dict[str, Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = project["dependencies"] + project["optional-dependencies"]["dev"]
    return {Requirement(r).name.lower(): Requirement(r) for r in reqs}


def _conda_pip_requirements() -> dict[str, Requirement]:
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip_section = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d)
    reqs = [r for r in pip_section if not r.startswith("-e")]
    return {Requirement(r).name.lower(): Requirement(r) for r in reqs}


def test_same_packages():
    py, conda = _pyproject_requirements(), _conda_pip_requirements()
    assert set(py) == set(conda), (
        f"only in pyproject.toml: {sorted(set(py) - set(conda))}; "
        f"only in environment.yml: {sorted(set(conda) - set(py))}")


@pytest.mark.parametrize("name", sorted(_pyproject_requirements()))
def test_pin_satisfies_range(name):
    pin = _conda_pip_requirements()[name]
    version = re.fullmatch(r"==(.+)", str(pin.specifier))
    assert version, f"environment.yml should pin {name} exactly (==), got {pin.specifier}"
    assert _pyproject_requirements()[name].specifier.contains(version.group(1), prereleases=True), (
        f"{name}=={version.group(1)} in environment.yml is outside pyproject's range "
        f"{_pyproject_requirements()[name].specifier}")


def test_environment_installs_the_package_itself():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip_section = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d)
    assert "-e ." in pip_section
    assert any(str(d).startswith("python") for d in env["dependencies"] if isinstance(d, str))
