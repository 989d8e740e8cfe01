"""Unit tests for scheduler_build.config.batching: each profile's batching verdict from the binary's own log."""

from __future__ import annotations

from scheduler_build.config import batching

# Lines as kube-scheduler v1.36/v1.37 prints them while building its profiles (klog text format).
EXTENDERS = ('I1126 23:10:01.000001       1 framework.go:837] "Disabling signatures for profile because it has '
             'extenders configured." profile="underlay-scheduler"')
PLUGINS = ('I1126 23:10:01.000002       1 framework.go:873] "Disabling signatures for profile because plugins do '
           'not support it." profile="underlay-scheduler" plugins=["UnderlayIPLimit","Coscheduling"]')
OTHER = 'I1126 23:10:01.000003       1 server.go:167] "Starting Kubernetes Scheduler" version="v1.37.2"'
CONFIG = {"profiles": [{"schedulerName": "underlay-scheduler"}, {"schedulerName": "underlay-scheduler-spread"}],
          "extenders": [{"urlPrefix": "http://extender:8888/"}]}


def test_names_unsigned_plugins_and_extenders_per_profile():
    first, second = batching.judge("\n".join([OTHER, EXTENDERS, PLUGINS]), CONFIG, "Beta")
    assert not first.on and first.unsigned == ("Coscheduling", "UnderlayIPLimit")
    assert first.extenders == ("http://extender:8888/",)
    assert first.line() == ("batching: profile underlay-scheduler: off (plugins without SignPod: Coscheduling, "
                            "UnderlayIPLimit; extenders configured: http://extender:8888/)")
    assert second.on and second.line() == "batching: profile underlay-scheduler-spread: on"


def test_silence_means_on_but_only_where_the_release_batches():
    (on,) = batching.judge(OTHER, {"profiles": [{"schedulerName": "p"}]}, "Beta")
    assert on.on
    (old,) = batching.judge(OTHER, {"profiles": [{"schedulerName": "p"}]}, None)  # 1.34: no such gate
    assert not old.on and "no opportunistic batching" in old.line()
    (alpha,) = batching.judge(OTHER, {}, "Alpha")  # no profiles: the default one
    assert alpha.profile == "default-scheduler" and "alpha" in alpha.why()


def test_a_profile_name_with_a_quote_and_json_shape():
    line = PLUGINS.replace('profile="underlay-scheduler"', r'profile="a\"b"')
    said = batching.parse_output(line)
    assert list(said) == [r'a\"b'] and said[r'a\"b'].unsigned == ["UnderlayIPLimit", "Coscheduling"]
    (verdict,) = batching.judge(EXTENDERS, {"profiles": [{"schedulerName": "underlay-scheduler"}]}, "Beta")
    assert verdict.to_dict() == {"profile": "underlay-scheduler", "on": False, "unsigned_plugins": [],
                                 "extenders": ["(unnamed)"], "unavailable": ""}


def test_builds_summary_is_kept_per_key_and_config_and_a_failure_is_not_kept(tmp_path, monkeypatch):
    """build's batching line: what the verdict depends on (the key) and the configuration already judged start
    no container again. The release's gate comes from a stand-in (the vocabulary needs the release's sources)."""
    import hashlib

    from scheduler_build.config import validate
    from scheduler_build.resolve import vocabulary

    monkeypatch.setattr(vocabulary, "feature_gates", lambda version, cache: {batching.GATE: "Beta"})
    missing = tmp_path / "no-such" / "kube-scheduler"
    failed = validate.batching_summary(missing, lambda: "aa" * 32, "profiles: []\n", "scheduler-build/golang:none",
                                       "v1.36.3", tmp_path)
    assert failed[0].startswith("batching: not checked"), failed
    assert not (tmp_path / "batching").exists()  # negative control: what the binary did not say is not kept
    kept = tmp_path / "batching" / hashlib.sha256(("bb" * 32 + "\0profiles: []\n").encode()).hexdigest()
    assert kept == validate.batching_summary_path(tmp_path, "bb" * 32, "profiles: []\n")
    kept.parent.mkdir(parents=True)
    kept.write_text("batching: profile p: on\n")
    assert validate.batching_summary(missing, lambda: "bb" * 32, "profiles: []\n", "scheduler-build/golang:none",
                                     "v1.36.3", tmp_path) == ["batching: profile p: on"]
    # another configuration under the same key is judged again (and here fails: no binary)
    assert validate.batching_summary(missing, lambda: "bb" * 32, "profiles: [x]\n", "scheduler-build/golang:none",
                                     "v1.36.3", tmp_path)[0].startswith("batching: not checked")


# --- the batching line of `build` after a plugin edit: no second run of the binary when the configuration decides

EXTENDER_CONFIG = """profiles:
- schedulerName: a
- schedulerName: b
extenders:
- urlPrefix: https://ext.example:8888
"""


def test_extenders_decide_every_profile_without_the_binary():
    import yaml

    verdicts = batching.judge_static(yaml.safe_load(EXTENDER_CONFIG), "Beta")
    assert [v.line() for v in verdicts] == [
        "batching: profile a: off (extenders configured: https://ext.example:8888)",
        "batching: profile b: off (extenders configured: https://ext.example:8888)"]
    assert batching.judge_static({"profiles": [{"schedulerName": "a"}]}, "Beta") is None  # only the binary can tell
    assert not batching.judge_static({}, None)[0].on  # no gate in this release


def test_the_build_summary_runs_the_binary_only_when_the_configuration_does_not_decide(tmp_path, monkeypatch):
    """The binary's run is replaced by a spy that records it (running it needs the engine and a build), and the
    release's gate by its stage (the vocabulary needs the release's sources): what is tested is whether the
    summary asks for the run. The negative control: without extenders it does."""
    from scheduler_build.config import validate
    from scheduler_build.resolve import vocabulary

    runs = []
    monkeypatch.setattr(vocabulary, "feature_gates", lambda version, cache: {batching.GATE: "Beta"})
    monkeypatch.setattr(validate, "validate_with_binary", lambda *args, **kwargs: runs.append(args) or
                        validate.BinaryVerdict(ok=True, output="", written=""))
    keys = []

    def key() -> str:  # the key is worked out (a scan of the binary) only when the configuration does not decide
        keys.append(1)
        return "cd" * 32

    lines = validate.batching_summary(tmp_path / "kube-scheduler", key, EXTENDER_CONFIG, "img", "v1.36.3", tmp_path)
    assert runs == [] and keys == [] and lines[0].endswith("off (extenders configured: https://ext.example:8888)")
    validate.batching_summary(tmp_path / "kube-scheduler", key, "profiles: [{schedulerName: a}]\n", "img",
                              "v1.36.3", tmp_path)
    assert len(runs) == 1 and keys == [1]
