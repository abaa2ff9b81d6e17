"""The built wheel works on its own: outside the checkout, with no editable install.

Builds the wheel (``pip wheel --no-deps``), installs it into a fresh virtualenv in a
temporary directory and, from there: prints ``--version``, runs ``tokenrisk devnet build``
on a copy of the checkout's built devnet (the wheel's own build inputs must hash to the
same value, or it would rebuild: proof that it carries every contract source, the
compile script and the lockfile), compiles the probe's source from the wheel's copy
with solc-js (to the build's very runtime code), and serves the API on the devnet to
answer one IsHoneypot request.

To keep ``make test`` fast, the fresh virtualenv gets its third-party dependencies from
the development virtualenv through a ``.pth`` path entry (its own ``.pth`` files, such
as the editable install's, are not processed); ``tokenrisk`` itself is imported from
the wheel, which the first test checks.  The npm tools (anvil, solc-js, Uniswap
artifacts) come from ``TOKENRISK_NODE_MODULES``, as docs/devnet.md tells a user to do.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from serving import wait_healthy

REPO = Path(__file__).resolve().parents[2]
BUILT_DEVNET = REPO / "build" / "devnet"


@dataclass(frozen=True)
class Installed:
    bin: Path
    home: Path
    env: dict[str, str]

    def run(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(a) for a in args],
            cwd=self.home,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )


SOURCE_FILES = ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "package.json")
SOURCE_FILES += ("package-lock.json",)
SOURCE_DIRS = ("src", "contracts", "tools")


def _clean_copy(target: Path) -> Path:
    """What a source distribution holds, without caches or earlier build output."""
    skip = shutil.ignore_patterns("__pycache__", "*.egg-info", "*.pyc")
    for name in SOURCE_DIRS:
        shutil.copytree(REPO / name, target / name, ignore=skip)
    for name in SOURCE_FILES:
        shutil.copyfile(REPO / name, target / name)
    return target


def _run(*args: object) -> None:
    subprocess.run([str(a) for a in args], check=True, capture_output=True, timeout=600)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    root = tmp_path_factory.mktemp("wheel")
    source = _clean_copy(root / "source")  # no stale build/lib of an earlier build
    _run(sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", root / "dist", source)
    (wheel,) = (root / "dist").glob("tokenrisk-*.whl")
    venv = root / "venv"
    _run(sys.executable, "-m", "venv", venv)
    python = venv / "bin" / "python"
    _run(python, "-m", "pip", "install", "-q", "--no-deps", wheel)
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    (Path(site) / "dev-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    home = root / "home"
    shutil.copytree(BUILT_DEVNET, home / "build" / "devnet")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TOKENRISK_", "PYTHON"))}
    env |= {
        "TOKENRISK_HOME": str(home),
        "TOKENRISK_DATA_DIR": str(home / "data"),
        "TOKENRISK_NODE_MODULES": str(REPO / "node_modules"),
        "PATH": f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}",
    }
    return Installed(venv / "bin", home, env)


def test_the_package_comes_from_the_wheel(installed: Installed) -> None:
    done = installed.run(
        installed.bin / "python", "-c", "import tokenrisk; print(tokenrisk.__file__)"
    )
    assert done.returncode == 0, done.stderr
    assert Path(done.stdout.strip()).is_relative_to(installed.bin.parent)
    assert not Path(done.stdout.strip()).is_relative_to(REPO)


def test_version(installed: Installed) -> None:
    done = installed.run(installed.bin / "tokenrisk", "--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "tokenrisk 0.1.0"


def test_devnet_build_finds_the_wheels_inputs_unchanged(installed: Installed) -> None:
    done = installed.run(installed.bin / "tokenrisk", "devnet", "build")
    assert done.returncode == 0, done.stderr
    assert Path(done.stdout.strip()) == installed.home / "build" / "devnet"
    assert "compiling contracts" not in done.stderr  # up to date: nothing was rebuilt


PROBE_SOURCE = "contracts/probe/TokenRiskProbe.sol"


def test_contracts_compile_from_the_wheel(installed: Installed) -> None:
    """The wheel's sources are the ones the checkout's build compiled (the standard-JSON
    input, every source byte and setting, hashes the same), and solc-js compiles them
    through the wheel's own script: the probe's file alone, to the very runtime code the
    build made of it.  Solc is deterministic for one input, so the whole input compiles
    as it did in the build; compiling all of it again here took 30 s."""
    script = (
        "import json, sys; from tokenrisk.devnet import solc;"
        "from tokenrisk.devnet.layout import sources_root;"
        "root = sources_root(); full = solc.build_standard_input(root);"
        "one = json.loads(full);"
        "one['sources'] = {k: v for k, v in one['sources'].items() if k == sys.argv[1]};"
        "out = solc.run_solc(root, json.dumps(one)); solc.check_errors(out);"
        "made = solc.collect_contracts(out);"
        "print(json.dumps({'hash': solc.hash_input(full), 'contracts': sorted(made),"
        " 'probe': made['TokenRiskProbe']['deployedBytecode']}))"
    )
    done = installed.run(installed.bin / "python", "-c", script, PROBE_SOURCE)
    assert done.returncode == 0, done.stderr
    compiled = json.loads(done.stdout)
    built = json.loads((BUILT_DEVNET / "solc" / "artifacts.json").read_text(encoding="utf-8"))
    assert compiled["hash"] == built["inputHash"]
    assert "TokenRiskProbe" in compiled["contracts"]
    assert "DevStablecoin" in built["contracts"]
    probe = built["contracts"]["TokenRiskProbe"]["deployedBytecode"]
    assert compiled["probe"] == probe and len(probe) > 1000


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def served(installed: Installed) -> Iterator[str]:
    port = _free_port()
    log = installed.home / "serve.log"
    with log.open("w") as output:
        process = subprocess.Popen(
            [installed.bin / "tokenrisk", "serve", "--host", "127.0.0.1", "--port", str(port)],
            cwd=installed.home,
            env=installed.env,
            stdout=subprocess.DEVNULL,
            stderr=output,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            wait_healthy(url, process, log, 120.0)
            yield url
        finally:
            process.terminate()
            process.wait(timeout=30)


def test_served_from_the_wheel_answers_is_honeypot(installed: Installed, served: str) -> None:
    manifest = json.loads((installed.home / "build" / "devnet" / "manifest.json").read_text())
    token = next(t for t in manifest["tokens"] if t["id"] == "plain")
    params = {"address": token["address"], "chainID": str(manifest["chainId"])}
    response = httpx.get(f"{served}/v2/IsHoneypot", params=params, timeout=120)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["simulationSuccess"] is True
    assert body["honeypotResult"]["isHoneypot"] is token["expected"]["isHoneypot"]
