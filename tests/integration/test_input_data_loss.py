"""Writing into a directory the user owns, through the real entry point: `inv scaffold.plugin
--force` replaces only files an earlier scaffold wrote (.git and the user's files survive);
`inv config.render --out` never drops a file the user added to a rendered directory."""

from __future__ import annotations


from tests.integration.test_input_errors import INV, assert_one_line, run

# Resolves the Kubernetes version through the Go module proxy.

ARGS = ["scaffold.plugin", "--name", "Demo", "--points", "filter", "--module", "example.com/demo",
        "--k8s-version", "1.36", "--no-tidy"]


def test_force_keeps_git_and_user_files(tmp_path):
    out = tmp_path / "repo"
    (out / ".git").mkdir(parents=True)
    (out / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (out / "NOTES.md").write_text("mine\n")
    refused = run(INV + ARGS + ["--out", str(out)])
    assert_one_line(refused, 2, "is not empty")
    plan = run(INV + ARGS + ["--out", str(out), "--force", "--dry-run"])
    assert plan.returncode == 0, plan.stderr[-2000:]
    assert "create   go.mod" in plan.stdout and ".git" not in plan.stdout
    assert sorted(p.name for p in out.iterdir()) == [".git", "NOTES.md"]  # a dry run writes nothing
    done = run(INV + ARGS + ["--out", str(out), "--force"])
    assert done.returncode == 0, done.stderr[-2000:]
    assert (out / ".git" / "HEAD").read_text() == "ref: refs/heads/main\n" and (out / "NOTES.md").read_text() == "mine\n"
    assert (out / "go.mod").is_file() and (out / ".scaffold-manifest.json").is_file()
    again = run(INV + ARGS + ["--out", str(out), "--force"])  # re-scaffold: replaces its own files, says so
    assert again.returncode == 0 and "replace  go.mod" in again.stderr
    (out / "go.mod").write_text("module mine\n")  # edited by the user: now theirs
    clash = run(INV + ARGS + ["--out", str(out), "--force"])
    assert_one_line(clash, 2, "go.mod (edited since it was generated)")
    assert (out / "go.mod").read_text() == "module mine\n"


def test_render_keeps_a_file_the_user_added_to_a_rendered_directory(tmp_path):
    out = tmp_path / "rendered"
    first = run(INV + ["config.render", "--out", str(out)])
    assert first.returncode == 0, first.stderr[-2000:]
    (out / "my-patch.yaml").write_text("mine: 1\n")  # e.g. a kustomize patch beside the rendered files
    # Different content (another image): the published tree would be swapped and the old one removed.
    again = run(INV + ["config.render", "--out", str(out), "--image", "example.com/other/kube-scheduler:1"])
    assert_one_line(again, 2, "holds files this task did not write (my-patch.yaml)")
    assert (out / "my-patch.yaml").read_text() == "mine: 1\n"
    assert "example.com/other" not in (out / "deployment.yaml").read_text()  # nothing was changed
