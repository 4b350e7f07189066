"""``tapegrad run SCRIPT`` and ``python -m tapegrad run SCRIPT`` run PyTorch programs unchanged."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

import tapegrad
import tapegrad.version

ROOT = Path(__file__).resolve().parent.parent

PROGRAM = textwrap.dedent(
    """
    import sys
    import torch
    import torch.nn as nn
    from torch.utils.data import DataLoader, TensorDataset

    torch.manual_seed(0)
    model = nn.Linear(2, 1)
    loader = DataLoader(TensorDataset(torch.ones(4, 2), torch.zeros(4, 1)), batch_size=2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
    print(torch.__name__, sys.argv[1:], round(loss.item(), 6))
    """
)


@pytest.fixture
def script(tmp_path):
    path = tmp_path / "train.py"
    path.write_text(PROGRAM)
    return path


def test_python_m_tapegrad_run(script) -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    out = subprocess.run([sys.executable, "-m", "tapegrad", "run", str(script), "a", "b"],
                         capture_output=True, text=True, check=True, env=env).stdout
    expected = subprocess.run([sys.executable, str(script), "a", "b"], capture_output=True,
                              text=True, check=True).stdout  # the same program on real torch
    assert out.replace("tapegrad", "torch") == expected


@pytest.mark.skipif(shutil.which("tapegrad") is None, reason="console script not on PATH")
def test_console_script(script) -> None:
    out = subprocess.run(["tapegrad", "run", str(script)], capture_output=True, text=True,
                         check=True).stdout
    assert out.startswith("tapegrad [] ")


class _Done:
    def __init__(self, returncode: int, stdout: str, stderr: str) -> None:
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


@pytest.fixture
def cli(capsys, monkeypatch):
    """``tapegrad ARGS...`` in this process (a fresh process per call costs seconds)."""
    from tapegrad._cli import main

    def call(*args: str, cwd=None) -> _Done:
        if cwd is not None:
            monkeypatch.chdir(cwd)
        capsys.readouterr()
        code = main(list(args))
        out, err = capsys.readouterr()
        return _Done(code, out, err)
    return call


def test_no_arguments_prints_the_help() -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    proc = subprocess.run([sys.executable, "-m", "tapegrad"], capture_output=True, text=True,
                          env=env)
    assert proc.returncode == 0 and proc.stderr == ""
    assert proc.stdout.startswith("usage: tapegrad [-h] [-V] COMMAND ...")
    for command in ("run", "demo", "graph", "doctor", "precision", "help"):
        assert f"\n    {command} " in proc.stdout


def test_help_and_version(cli) -> None:
    assert cli("--help").returncode == 0
    for flag in ("--version", "-V"):
        proc = cli(flag)
        assert proc.returncode == 0
        assert proc.stdout == (f"tapegrad {tapegrad.version.tapegrad_version} "
                               "(PyTorch 2.13.0 API)\n")
    assert torch.__version__.startswith("2.13.0")  # the API version it names
    main_help = cli("--help").stdout
    proc = cli("help")
    assert proc.returncode == 0 and proc.stdout == main_help
    proc = cli("help", "nope")
    assert proc.returncode == 2 and proc.stderr.startswith("tapegrad help: no command 'nope'")


@pytest.mark.parametrize("command", ["run", "demo", "graph", "doctor", "precision"])
def test_every_command_has_full_help(cli, command) -> None:
    """``tapegrad COMMAND --help`` (and ``-h``, and ``tapegrad help COMMAND``): status 0, the
    usage line, a description and every option, on stdout."""
    texts = []
    for args in ([command, "--help"], [command, "-h"], ["help", command]):
        proc = cli(*args)
        assert proc.returncode == 0, (args, proc.stderr)
        assert proc.stderr == ""
        assert proc.stdout.startswith(f"usage: tapegrad {command} ")
        assert "options:" in proc.stdout and "-h, --help" in proc.stdout
        texts.append(proc.stdout)
    assert texts[0] == texts[1] == texts[2]
    if command in ("graph", "doctor"):
        assert "--out" in texts[0] and "--lang" in texts[0] and "SCRIPT" in texts[0]
        assert "Exit status" in texts[0]


def test_run_help_and_usage_errors(capsys) -> None:
    from tapegrad._cli import main

    assert main(["run", "--help"]) == 0
    assert capsys.readouterr().out.startswith("usage: tapegrad run [-h] SCRIPT [ARGS ...]")
    assert main(["run"]) == 2
    assert "the following arguments are required: SCRIPT" in capsys.readouterr().err
    assert main(["run", "--bogus", "x.py"]) == 2
    assert "unrecognized arguments: --bogus" in capsys.readouterr().err
    assert main(["frobnicate"]) == 2
    assert "invalid choice: 'frobnicate'" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["run", "graph", "doctor"])
def test_missing_script_is_one_line_and_status_2(cli, tmp_path, command) -> None:
    """The same line for run, graph and doctor; the status ``python absent.py`` gives."""
    proc = cli(command, "absent.py", cwd=tmp_path)
    native = subprocess.run([sys.executable, "absent.py"], capture_output=True, text=True,
                            cwd=tmp_path, timeout=60)
    assert proc.returncode == native.returncode == 2
    assert proc.stderr == (f"tapegrad {command}: can't open file 'absent.py': "
                           "[Errno 2] No such file or directory\n")
    assert proc.stdout == ""
    assert not (tmp_path / "tapegrad-doctor").exists()


USER_SCRIPT = textwrap.dedent(
    """
    import sys
    import torch

    def inner():
        raise ValueError("bad value " + torch.__name__)

    print("argv", sys.argv[1:])
    if "--exit" in sys.argv:
        sys.exit(int(sys.argv[-1]))
    if "--message" in sys.argv:
        sys.exit("a message")
    if "--interrupt" in sys.argv:
        raise KeyboardInterrupt
    if "--fail" in sys.argv:
        inner()
    """
)


@pytest.fixture
def user_script(tmp_path):
    path = tmp_path / "user.py"
    path.write_text(USER_SCRIPT)
    return path


def test_arguments_after_the_script_are_the_scripts(cli, user_script) -> None:
    proc = cli("run", str(user_script), "--help", "-x", "--", "y")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "argv ['--help', '-x', '--', 'y']\n"
    proc = cli("run", "--", str(user_script), "--help")
    assert proc.stdout == "argv ['--help']\n"
    assert sys.modules["torch"] is tapegrad  # what `import torch` gave the script


def test_traceback_starts_at_the_users_code(cli, user_script) -> None:
    proc = cli("run", str(user_script), "--fail")
    assert proc.returncode == 1
    lines = proc.stderr.splitlines()
    assert lines[0] == "Traceback (most recent call last):"
    assert lines[1].startswith(f'  File "{user_script}", line ')  # none of ours, no runpy
    for internal in ("_cli.py", "_script.py", "runpy"):
        assert internal not in proc.stderr
    assert lines[-1] == "ValueError: bad value tapegrad"
    # the same frames python itself shows for the script
    native = subprocess.run([sys.executable, str(user_script), "--fail"], capture_output=True,
                            text=True)
    assert native.returncode == 1
    assert (proc.stderr.replace("tapegrad", "torch").splitlines()[:-1]
            == native.stderr.splitlines()[:-1])


@pytest.mark.parametrize("command", ["graph", "doctor"])
def test_graph_and_doctor_show_the_users_traceback_as_python_does(command, user_script,
                                                                  tmp_path) -> None:
    """A failing script under ``tapegrad graph`` / ``tapegrad doctor`` (a fresh process: both
    alias torch): the traceback starts at the script's own frame and has the frames python
    shows, none of the CLI's."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), TAPEGRAD_LANG="en")
    proc = subprocess.run([sys.executable, "-m", "tapegrad", command, str(user_script), "--fail"],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert proc.returncode == 1
    err = proc.stderr
    for internal in ("_cli.py", "_script.py", "_commands.py", "doctor.py", "runpy"):
        assert internal not in err
    start = err.index("Traceback (most recent call last):\n")
    assert err[:start] in ("", f"tapegrad doctor: running {user_script} on tapegrad\n")
    native = subprocess.run([sys.executable, str(user_script), "--fail"], capture_output=True,
                            text=True, timeout=60)
    frames = native.stderr.splitlines()
    assert err[start:].replace("tapegrad", "torch").splitlines()[:len(frames)] == frames


def test_exit_codes_pass_through(cli, user_script) -> None:
    assert cli("run", str(user_script), "--exit", "7").returncode == 7
    assert cli("run", str(user_script), "--exit", "0").returncode == 0
    proc = cli("run", str(user_script), "--message")
    assert proc.returncode == 1 and proc.stderr == "a message\n"
    proc = cli("run", str(user_script), "--interrupt")
    assert proc.returncode == 130
    assert proc.stderr.splitlines()[-1] == "KeyboardInterrupt"
    assert "_cli.py" not in proc.stderr and "_script.py" not in proc.stderr


def test_run_script_in_process_restores_argv_and_path(user_script, capsys) -> None:
    from tapegrad._script import run_script

    argv, path = list(sys.argv), list(sys.path)
    assert run_script(str(user_script), ["--exit", "3"]) == 3
    assert capsys.readouterr().out == "argv ['--exit', '3']\n"
    assert sys.argv == argv and sys.path == path
    assert run_script(str(user_script), ["--fail"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f'Traceback (most recent call last):\n  File "{user_script}"')


def test_commands_load_lazily(monkeypatch, capsys) -> None:
    from tapegrad import _cli

    monkeypatch.setitem(_cli.COMMANDS, "absent",
                        _cli.Command("a command whose module is not installed",
                                     "tapegrad._no_such_module:command"))
    assert _cli.main(["absent", "x"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("tapegrad absent: this command is not available")
    monkeypatch.setitem(_cli.COMMANDS, "needs",
                        _cli.Command("a command needing a package", "no_such_package_xyz:f"))
    assert _cli.main(["needs"]) == 1
    assert "needs the Python package 'no_such_package_xyz'" in capsys.readouterr().err
    # a registered command gets the arguments after its name
    seen = []
    monkeypatch.setitem(_cli.COMMANDS, "echo", _cli.Command("echo", lambda a: seen.append(a) or 4))
    assert _cli.main(["echo", "--help", "1"]) == 4 and seen == [["--help", "1"]]


def test_ctrl_c_in_a_command(monkeypatch, capsys) -> None:
    from tapegrad import _cli

    def interrupted(argv):
        raise KeyboardInterrupt

    monkeypatch.setitem(_cli.COMMANDS, "slow", _cli.Command("slow", interrupted))
    assert _cli.main(["slow"]) == 130
    assert capsys.readouterr().err == "\ntapegrad slow: interrupted\n"
