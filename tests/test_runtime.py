import importlib

import pytest
import torch

from coursekit import runtime


def test_profile_default_is_class(monkeypatch):
    monkeypatch.delenv("COURSEKIT_PROFILE", raising=False)
    assert runtime.profile() == "class"


@pytest.mark.parametrize("value, expected", [("quick", "quick"), (" Class ", "class"), ("FULL", "full"), ("", "class")])
def test_profile_parsing(monkeypatch, value, expected):
    monkeypatch.setenv("COURSEKIT_PROFILE", value)
    assert runtime.profile() == expected


@pytest.mark.parametrize("bad", ["fast", "qiuck", "1"])
def test_bad_profile_is_a_clear_error(monkeypatch, bad):
    monkeypatch.setenv("COURSEKIT_PROFILE", bad)
    with pytest.raises(ValueError, match=r"expected one of quick, class, full"):
        runtime.profile()


def test_sizes_picks_the_active_profile(monkeypatch):
    monkeypatch.setenv("COURSEKIT_PROFILE", "full")
    s = runtime.sizes(quick=dict(n=1), class_=dict(n=2), full=dict(n=3))
    assert s.n == 3 and s["n"] == 3 and s.profile == "full" and s.asdict() == {"n": 3}
    assert runtime.sizes(quick=dict(n=1), class_=dict(n=2), full=dict(n=3), profile_name="quick").n == 1


def test_sizes_requires_the_same_knobs_everywhere():
    with pytest.raises(ValueError, match=r"missing: \{'quick': \['width'\]"):
        runtime.sizes(quick=dict(n=1), class_=dict(n=2, width=3), full=dict(n=3, width=4))
    with pytest.raises(TypeError, match="must be a dict"):
        runtime.sizes(quick=[1], class_=dict(), full=dict())


def test_unknown_knob_is_a_clear_error():
    s = runtime.sizes(quick=dict(n=1), class_=dict(n=2), full=dict(n=3), profile_name="class")
    with pytest.raises(AttributeError, match=r"no size knob 'steps'; this notebook defines \['n'\]"):
        _ = s.steps


def test_sizes_are_read_only():
    s = runtime.sizes(quick=dict(n=1), class_=dict(n=2), full=dict(n=3), profile_name="class")
    with pytest.raises(TypeError):
        s.values["n"] = 5


def test_device_choice_and_override(monkeypatch):
    monkeypatch.delenv("COURSEKIT_DEVICE", raising=False)
    expected = "cuda" if torch.cuda.is_available() else ("mps" if torch.backends.mps.is_available() else "cpu")
    assert runtime.device().type == expected
    assert runtime.device("cpu").type == "cpu"
    monkeypatch.setenv("COURSEKIT_DEVICE", "cpu")
    assert runtime.device().type == "cpu"


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
def test_unavailable_device_is_an_error():
    with pytest.raises(ValueError, match="CUDA is not available"):
        runtime.device("cuda")
    with pytest.raises(ValueError, match="expected cpu, cuda"):
        runtime.device("tpu")


def test_seed_everything_makes_draws_repeatable():
    import random

    import numpy as np

    g1 = runtime.seed_everything(7)
    a = (random.random(), np.random.rand(), torch.rand(1).item(), torch.rand(1, generator=g1).item())
    g2 = runtime.seed_everything(7)
    b = (random.random(), np.random.rand(), torch.rand(1).item(), torch.rand(1, generator=g2).item())
    assert a == b
    with pytest.raises(TypeError):
        runtime.seed_everything(1.5)


def test_environment_report_has_the_essentials():
    report = runtime.environment_report()
    for key in ("python", "torch", "device", "profile", "transformers"):
        assert key in report


def test_a_busy_machine_gets_one_torch_thread_unless_told_otherwise(monkeypatch, capsys):
    threads = torch.get_num_threads()
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setattr(runtime, "oversubscribed", lambda: True)
    try:
        torch.set_num_threads(2)
        runtime.sizes(quick={"n": 1}, class_={"n": 2}, full={"n": 3}, profile_name="quick")
        assert torch.get_num_threads() == 1 and "using one torch thread" in capsys.readouterr().out
        torch.set_num_threads(2)
        monkeypatch.setenv("OMP_NUM_THREADS", "2")                      # the user chose: leave it
        assert runtime.use_one_thread_if_busy() is False and torch.get_num_threads() == 2
        monkeypatch.delenv("OMP_NUM_THREADS")
        monkeypatch.setattr(runtime, "oversubscribed", lambda: False)   # a quiet machine: leave it
        assert runtime.use_one_thread_if_busy() is False and torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(threads)


# ------------------------------------------------------------------ run_subcommand: python -m coursekit.<package>
DOC = """python -m coursekit.toy: a toy command line.

* ``go`` — go.
"""


def test_subcommand_help_prints_the_docstring_and_exits_0(capsys):
    for flag in ("-h", "--help"):
        assert runtime.run_subcommand(DOC, {"go": lambda argv: 7}, [flag]) == 0
        out, err = capsys.readouterr()
        assert out == DOC.strip() + "\n" and err == ""


@pytest.mark.parametrize("argv", [[], ["nonsense"], ["--go"]], ids=["no command", "unknown", "an option"])
def test_no_or_an_unknown_subcommand_prints_the_docstring_on_stderr_and_exits_2(capsys, argv):
    called = []
    assert runtime.run_subcommand(DOC, {"go": called.append}, argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == DOC.strip() + "\n" and not called


def test_a_known_subcommand_gets_the_whole_argv_and_its_return_value_is_the_status(monkeypatch):
    seen = []
    commands = {"go": lambda argv: seen.append(argv) or 3, "quiet": lambda argv: None}
    assert runtime.run_subcommand(DOC, commands, ("go", "--fast")) == 3 and seen == [["go", "--fast"]]
    assert runtime.run_subcommand(DOC, commands, ["quiet"]) == 0           # None counts as success
    monkeypatch.setattr("sys.argv", ["python -m coursekit.toy", "go", "x"])
    assert runtime.run_subcommand(DOC, commands) == 3 and seen[-1] == ["go", "x"]


@pytest.mark.parametrize("package", ["bart", "bert", "gpt"])
def test_the_family_command_lines_dispatch_with_it(package, capsys):
    cli = importlib.import_module(f"coursekit.{package}.__main__")
    assert cli.main(["--help"]) == 0 and capsys.readouterr().out == cli.__doc__.strip() + "\n"
    assert cli.main(["nonsense"]) == 2 and capsys.readouterr().err == cli.__doc__.strip() + "\n"
