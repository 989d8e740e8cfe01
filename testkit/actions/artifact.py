"""Stand-in for actions/upload-artifact@v4 and download-artifact@v4: the same v4 (twirp) protocol,
spoken to act's own artifact server (ACTIONS_RESULTS_URL, ACTIONS_RUNTIME_TOKEN come from act).

    python3 artifact.py upload     INPUT_NAME, INPUT_PATH (globs, one a line)
    python3 artifact.py download   INPUT_NAME or INPUT_PATTERN, INPUT_PATH, INPUT_MERGE_MULTIPLE
"""

from __future__ import annotations

import base64
import fnmatch
import glob
import io
import itertools
import json
import os
import sys
import urllib.request
import zipfile
from pathlib import Path

SERVICE = "twirp/github.actions.results.api.v1.ArtifactService/"
WILDCARDS = "*?["


def backend_ids() -> dict[str, str]:
    """The run and job ids the results service wants, from the runtime token's `scp` claim."""
    payload = os.environ["ACTIONS_RUNTIME_TOKEN"].split(".")[1]
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    scope = next(s for s in claims["scp"].split() if s.startswith("Actions.Results:"))
    _, run, job = scope.split(":")
    return {"workflowRunBackendId": run, "workflowJobRunBackendId": job}


def call(method: str, body: dict) -> dict:
    url = os.environ["ACTIONS_RESULTS_URL"].rstrip("/") + "/" + SERVICE + method
    request = urllib.request.Request(url, data=json.dumps({**backend_ids(), **body}).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=300) as response:
        return json.loads(response.read() or b"{}")


def _root(pattern: str) -> Path:
    """The fixed part of a pattern (up to the first wildcard): archive names are relative to it."""
    fixed = Path(*itertools.takewhile(lambda part: not set(part) & set(WILDCARDS), Path(pattern).parts))
    return fixed if fixed.is_dir() else fixed.parent


def collect(patterns: list[str]) -> tuple[list[Path], Path]:
    found: list[Path] = []
    for pattern in patterns:
        hits = [Path(h) for h in glob.glob(pattern, recursive=True)]
        if not hits:
            sys.exit(f"upload-artifact: no files match {pattern!r}")
        for hit in hits:
            found += sorted(f for f in hit.rglob("*") if f.is_file()) if hit.is_dir() else [hit]
    root = Path(os.path.commonpath([str(_root(p).resolve()) for p in patterns]))
    return found, root


def upload(name: str, paths: str) -> None:
    files, root = collect([p.strip() for p in paths.splitlines() if p.strip()])
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in files:
            archive.write(path, str(path.resolve().relative_to(root)))
    data = buffer.getvalue()
    url = call("CreateArtifact", {"name": name, "version": 4})["signedUploadUrl"]
    for comp, body in (("block", data), ("blocklist", b"")):
        urllib.request.urlopen(urllib.request.Request(f"{url}&comp={comp}", data=body, method="PUT"), timeout=300).close()
    call("FinalizeArtifact", {"name": name, "size": str(len(data))})
    print(f"uploaded artifact {name}: {len(files)} files, {len(data)} bytes")


def download(name: str, pattern: str, path: str, merge: bool) -> None:
    listed = [a["name"] for a in call("ListArtifacts", {}).get("artifacts", [])]
    chosen = [n for n in listed if (n == name if name else fnmatch.fnmatch(n, pattern or "*"))]
    if not chosen:
        sys.exit(f"download-artifact: no artifact matches {name or pattern!r} (have: {', '.join(sorted(listed)) or 'none'})")
    for artifact in chosen:
        url = call("GetSignedArtifactURL", {"name": artifact})["signedUrl"]
        with urllib.request.urlopen(url, timeout=300) as response:
            data = response.read()
        target = Path(path or ".") if (name or merge) else Path(path or ".") / artifact
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            archive.extractall(target)
        print(f"downloaded artifact {artifact} into {target}")


if __name__ == "__main__":
    env = os.environ
    if sys.argv[1] == "upload":
        upload(env["INPUT_NAME"] or "artifact", env["INPUT_PATH"])
    else:
        download(env.get("INPUT_NAME", ""), env.get("INPUT_PATTERN", ""), env.get("INPUT_PATH", ""),
                 env.get("INPUT_MERGE_MULTIPLE", "false") == "true")
