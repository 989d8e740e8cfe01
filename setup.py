"""Only a build hook; the project is described in pyproject.toml.

A wheel carries the commit it was built from in scheduler_build/_commit.txt (read by
scheduler_build.cli.about for `--version`): from git when building in a checkout, else from
$SCHEDULER_BUILD_COMMIT (a build from an exported tree), else none.
"""

import os
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

sys.path.insert(0, str(Path(__file__).resolve().parent))  # this tree's package, not an installed one
from scheduler_build.cli.about import COMMIT_FILE, git_commit  # noqa: E402


class BuildPyWithCommit(build_py):
    def run(self):
        super().run()
        stamp = os.environ.get("SCHEDULER_BUILD_COMMIT") or git_commit(Path(__file__).resolve().parent)
        if stamp and not self.editable_mode:
            target = Path(self.build_lib) / "scheduler_build" / COMMIT_FILE
            target.write_text(stamp + "\n")


setup(cmdclass={"build_py": BuildPyWithCommit})
