"""`python -m scheduler_build.settings --update docs/settings.md` (or `--markdown`): the settings reference."""

import sys
from pathlib import Path

from scheduler_build.settings import reference_markdown, update_readme

if __name__ == "__main__":
    if sys.argv[1:2] == ["--update"] and len(sys.argv) == 3:
        print("updated" if update_readme(Path(sys.argv[2])) else "up to date", file=sys.stderr)
    elif sys.argv[1:] == ["--markdown"]:
        print(reference_markdown())
    else:
        sys.exit("usage: python -m scheduler_build.settings --markdown | --update docs/settings.md")
