"""Build hook: the wheel carries the devnet's build inputs (see tokenrisk.devnet.layout).

``tokenrisk devnet build`` compiles ``contracts/`` with ``tools/solc-compile.js`` and the
npm tools pinned by ``package-lock.json``.  Those live at the top of the checkout, outside
the package, so ``build_py`` copies them into ``tokenrisk/devnet/project/`` of the wheel.
Everything else is declared in pyproject.toml.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
PROJECT_FILES = ("tools/solc-compile.js", "tools/npm-stub/package.json")
PROJECT_FILES += ("package.json", "package-lock.json")


class BuildWithDevnetSources(build_py):
    def run(self) -> None:
        super().run()
        target = Path(self.build_lib) / "tokenrisk" / "devnet" / "project"
        shutil.rmtree(target, ignore_errors=True)
        for source in sorted((ROOT / "contracts").rglob("*.sol")):
            self._copy(source, target / source.relative_to(ROOT))
        for name in PROJECT_FILES:
            self._copy(ROOT / name, target / name)

    def _copy(self, source: Path, destination: Path) -> None:
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, destination)


setup(cmdclass={"build_py": BuildWithDevnetSources})
