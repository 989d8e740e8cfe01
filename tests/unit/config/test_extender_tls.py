"""The scheduler <-> reference extender mutual TLS: spec field, rendering, certificate planning (unit)."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest
import yaml

from scheduler_build.config import extender_tls
from scheduler_build.deploy import tls
from scheduler_build import spec as spec_mod
from scheduler_build.config import render
from scheduler_build.errors import UserError

REPO = Path(__file__).resolve().parents[3]
EXAMPLE = REPO / "examples" / "underlay" / "scheduler.yaml"
NOW = dt.datetime.now(dt.timezone.utc)


def example(tls: bool | None = None) -> spec_mod.Spec:
    data = yaml.safe_load(EXAMPLE.read_text())
    if tls is not None:
        data["referenceExtender"]["tls"] = tls
    return spec_mod.loads(yaml.safe_dump(data), EXAMPLE, check_files=False)


def objects_of(files: dict[str, str]) -> list[dict]:
    kust = yaml.safe_load(files["kustomization.yaml"])
    return [d for name in kust["resources"] for d in yaml.safe_load_all(files[name]) if d]


def by(objects: list[dict], kind: str, name: str) -> dict:
    return next(o for o in objects if o["kind"] == kind and o["metadata"]["name"] == name)


# --- the spec field ----------------------------------------------------------


def test_tls_is_on_by_default_and_false_opts_out():
    assert example().reference_extender.tls is True
    assert example(tls=False).reference_extender.tls is False
    assert spec_mod.reference_extender_url(example()).startswith("https://underlay-scheduler-extender.underlay-system.svc:")
    assert spec_mod.reference_extender_url(example(tls=False)).startswith("http://")


def test_tls_must_be_a_boolean():
    data = yaml.safe_load(EXAMPLE.read_text())
    data["referenceExtender"]["tls"] = "off"
    with pytest.raises(spec_mod.SpecError) as info:
        spec_mod.loads(yaml.safe_dump(data), EXAMPLE, check_files=False)
    assert "referenceExtender.tls" in info.value.paths


# --- rendering ---------------------------------------------------------------


def test_rendering_is_deterministic_and_holds_no_private_key():
    a = render.render_files(example(), "r/s:1")
    b = render.render_files(example(), "r/s:1")
    assert a == b
    for name, text in a.items():
        assert "PRIVATE KEY" not in text and "BEGIN CERTIFICATE" not in text, name
        assert not any(o.get("kind") == "Secret" for o in yaml.safe_load_all(text) if isinstance(o, dict)), name


def test_extender_entry_uses_https_and_the_mounted_client_certificate():
    files = render.render_files(example(), "r/s:1")
    config = yaml.safe_load(files[render.CONFIG_FILE])
    (entry,) = config["extenders"]
    assert entry["enableHTTPS"] is True
    assert entry["urlPrefix"] == "https://underlay-scheduler-extender.underlay-system.svc:8888"
    assert entry["tlsConfig"] == extender_tls.client_tls_config()
    objects = objects_of(files)
    scheduler = by(objects, "Deployment", "underlay-scheduler")["spec"]["template"]["spec"]
    (container,) = scheduler["containers"]
    mount = next(m for m in container["volumeMounts"] if m["name"] == "extender-tls")
    for path in entry["tlsConfig"].values():
        assert Path(path).parent == Path(mount["mountPath"])
    volume = next(v for v in scheduler["volumes"] if v["name"] == "extender-tls")
    sources = {s["secret"]["name"]: {i["path"] for i in s["secret"]["items"]} for s in volume["projected"]["sources"]}
    assert sources == {"underlay-scheduler-extender-tls-client": {"client.crt", "client.key"},
                       "underlay-scheduler-extender-tls-ca": {"ca.crt"}}


def test_extender_serves_tls_requires_client_certs_and_probes_a_plain_port():
    objects = objects_of(render.render_files(example(), "r/s:1"))
    dep = by(objects, "Deployment", "underlay-scheduler-extender")
    (container,) = dep["spec"]["template"]["spec"]["containers"]
    args = dict(a.split("=", 1) for a in container["args"])
    assert args["--tls-cert"].endswith("/tls.crt") and args["--tls-key"].endswith("/tls.key")
    assert args["--tls-client-ca"].endswith("/ca.crt")  # client certificates required
    assert args["--health-port"] == "8889"
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert ports == {"https": 8888, "health": 8889}
    assert container["readinessProbe"]["httpGet"]["port"] == "health"
    svc = by(objects, "Service", "underlay-scheduler-extender")
    assert [p["port"] for p in svc["spec"]["ports"]] == [8888]  # the probe port is not in the Service
    host = dep["metadata"]["annotations"][extender_tls.SERVICE_ANNOTATION]
    assert host == "underlay-scheduler-extender.underlay-system.svc"
    assert host in extender_tls.dns_names("underlay-scheduler-extender", "underlay-system")


def test_network_policy_admits_only_the_scheduler_pods():
    objects = objects_of(render.render_files(example(), "r/s:1"))
    policy = by(objects, "NetworkPolicy", "underlay-scheduler-extender")
    scheduler = by(objects, "Deployment", "underlay-scheduler")
    extender = by(objects, "Deployment", "underlay-scheduler-extender")
    assert policy["spec"]["podSelector"] == extender["spec"]["selector"]
    (rule,) = policy["spec"]["ingress"]
    assert rule["from"] == [{"podSelector": scheduler["spec"]["selector"]}]
    assert rule["ports"] == [{"port": 8888, "protocol": "TCP"}]


def test_plain_http_opt_out_renders_no_tls():
    files = render.render_files(example(tls=False), "r/s:1")
    (entry,) = yaml.safe_load(files[render.CONFIG_FILE])["extenders"]
    assert entry["enableHTTPS"] is False and "tlsConfig" not in entry
    assert "tls" not in files["deployment.yaml"] and "--tls" not in files["extender.yaml"]
    assert tls.target(objects_of(files)) is None
    assert "networkpolicy.yaml" in files  # the policy does not depend on TLS


# --- certificates and the plan -------------------------------------------------

NAME, NS = "underlay-scheduler-extender", "underlay-system"
SANS = extender_tls.dns_names(NAME, NS)


@pytest.fixture(scope="module")
def issued():
    return extender_tls.issue(NAME, NS)


def test_issued_certificates_are_kept(issued):
    _, certs = issued
    assert extender_tls.problems(certs, SANS, NOW) == []
    assert extender_tls.plan(certs, SANS, NOW) == extender_tls.Plan("keep")


def test_missing_certificates_are_created(issued):
    assert extender_tls.plan(None, SANS, NOW).action == "create"
    _, certs = issued
    secrets = extender_tls.secret_objects(extender_tls.layout(NAME), NS, {}, certs)
    ca, serving, client = secrets
    assert extender_tls.certs_from_secrets(ca["data"], serving["data"], None) is None
    assert extender_tls.certs_from_secrets(ca["data"], serving["data"], {"tls.crt": client["data"]["tls.crt"]}) is None
    assert extender_tls.certs_from_secrets(*(s["data"] for s in secrets)) == certs


def test_rotate_on_request_near_expiry_or_wrong_names(issued):
    _, certs = issued
    assert extender_tls.plan(certs, SANS, NOW, rotate=True).action == "rotate"
    late = extender_tls.plan(certs, SANS, NOW + dt.timedelta(days=extender_tls.DAYS - 10))
    assert late.action == "rotate" and any("renewal is due" in r for r in late.reasons)
    moved = extender_tls.plan(certs, extender_tls.dns_names(NAME, "elsewhere"), NOW)
    assert moved.action == "rotate" and "does not cover" in moved.reasons[0]


def test_a_foreign_or_mismatched_certificate_is_not_kept(issued):
    _, certs = issued
    _, other = extender_tls.issue(NAME, NS)
    foreign = extender_tls.Certs(certs.ca_bundle, other.serving_cert, other.serving_key, certs.client_cert,
                                 certs.client_key)
    assert any("not signed by a CA of the bundle" in p for p in extender_tls.problems(foreign, SANS, NOW))
    swapped = extender_tls.Certs(certs.ca_bundle, certs.serving_cert, certs.client_key, certs.client_cert,
                                 certs.client_key)
    assert any("serving key does not match" in p for p in extender_tls.problems(swapped, SANS, NOW))
    roles = extender_tls.Certs(certs.ca_bundle, certs.client_cert, certs.client_key, certs.client_cert,
                               certs.client_key)
    assert any("serving certificate lacks its extended key usage" in p
               for p in extender_tls.problems(roles, SANS, NOW))
    assert extender_tls.problems(extender_tls.Certs(b"junk", b"", b"", b"", b""), SANS, NOW)


def test_rotation_trusts_both_cas_before_any_new_leaf(issued):
    old_ca, old = issued
    new_ca, new = extender_tls.issue(NAME, NS)
    steps = extender_tls.rotation_steps(old, new_ca, new)
    assert len(steps) == 3
    assert extender_tls.split_bundle(steps[0].ca_bundle) == [old_ca, new_ca]
    assert steps[0].serving_cert == old.serving_cert and steps[0].client_cert == old.client_cert
    assert steps[1].ca_bundle == steps[0].ca_bundle and steps[1].serving_cert == new.serving_cert
    assert steps[2] == new
    for step in steps:  # every intermediate state is itself valid
        assert extender_tls.problems(step, SANS, NOW) == []
    # each step changes the digest, so each step rolls the pods
    assert len({old.fingerprint()} | {s.fingerprint() for s in steps}) == 4


def test_deploy_adds_the_secrets_and_rolls_only_on_new_certificates(issued):
    _, certs = issued
    objects = objects_of(render.render_files(example(), "r/s:1"))
    tgt = tls.target(objects)
    assert tgt == tls.Target(NS, NAME, f"{NAME}.{NS}.svc", tgt.labels)
    out = tls.with_certs(objects, tgt, certs)
    assert objects == objects_of(render.render_files(example(), "r/s:1"))  # input untouched
    secrets = [o for o in out if o["kind"] == "Secret"]
    assert {s["metadata"]["name"] for s in secrets} == {f"{NAME}-tls-ca", f"{NAME}-tls-serving", f"{NAME}-tls-client"}
    digests = {o["metadata"]["name"]: o["spec"]["template"]["metadata"]["annotations"][extender_tls.CERTS_ANNOTATION]
               for o in out if o["kind"] == "Deployment"}
    assert digests == {"underlay-scheduler": certs.fingerprint(), NAME: certs.fingerprint()}
    assert tls.with_certs(objects, tgt, certs) == out  # same certificates: same objects, no roll


def test_rotate_certs_without_tls_is_one_clear_error():
    objects = objects_of(render.render_files(example(tls=False), "r/s:1"))
    with pytest.raises(UserError, match="--rotate-certs"):
        tls.prepare(None, objects, rotate=True, dry_run=False, wait=True, apply_and_roll=lambda o: None)


def test_dry_run_makes_no_certificates():
    objects = objects_of(render.render_files(example(), "r/s:1"))
    assert tls.prepare(None, objects, rotate=False, dry_run=True, wait=True,
                                apply_and_roll=lambda o: None) == objects


def test_private_keys_only_in_secret_data(issued):
    _, certs = issued
    out = tls.with_certs(objects_of(render.render_files(example(), "r/s:1")),
                                  tls.target(objects_of(render.render_files(example(), "r/s:1"))), certs)
    for obj in out:
        if obj["kind"] != "Secret":
            assert not re.search("PRIVATE KEY", yaml.safe_dump(obj))


# --- the extender serving with the issued certificates (a real server on 127.0.0.1) -----------


def test_the_extender_refuses_a_client_without_certificate_and_probes_stay_plain(issued, tmp_path):
    import http.client
    import socket
    import ssl

    from scheduler_build.extender.service import ServeConfig, Server, TLSOptions, create
    from scheduler_build.extender.server import start_health_server

    _, certs = issued
    files = {}
    for key in ("ca_bundle", "serving_cert", "serving_key", "client_cert", "client_key"):
        files[key] = tmp_path / key
        files[key].write_bytes(getattr(certs, key))
    extender, _ = create(ServeConfig(), connect=False)
    server = Server(extender, "127.0.0.1", 0, TLSOptions(str(files["serving_cert"]), str(files["serving_key"]),
                                                         str(files["ca_bundle"]))).start_background()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        health_port = probe.getsockname()[1]
    health = start_health_server(extender, "127.0.0.1", health_port)
    try:
        anonymous = ssl.create_default_context(cafile=str(files["ca_bundle"]))
        anonymous.check_hostname = False
        with pytest.raises((ssl.SSLError, ConnectionError)):
            conn = http.client.HTTPSConnection("127.0.0.1", server.port, context=anonymous, timeout=5)
            conn.request("POST", "/filter", b"{}")
            conn.getresponse()
        scheduler = ssl.create_default_context(cafile=str(files["ca_bundle"]))
        scheduler.check_hostname = False
        scheduler.load_cert_chain(str(files["client_cert"]), str(files["client_key"]))
        conn = http.client.HTTPSConnection("127.0.0.1", server.port, context=scheduler, timeout=5)
        conn.request("GET", "/healthz")
        assert conn.getresponse().status == 200
        conn.close()  # an open keep-alive connection would hold the server's shutdown
        plain = http.client.HTTPConnection("127.0.0.1", health_port, timeout=5)
        plain.request("GET", "/healthz")
        assert plain.getresponse().read() == b"ok\n"
        plain.request("GET", "/readyz")
        assert plain.getresponse().status == 503  # no API server: never ready
        plain.request("GET", "/filter")
        assert plain.getresponse().status == 404  # the verbs are never served in plain HTTP
        plain.close()
    finally:
        health.shutdown()
        server.stop()


def test_the_extender_image_is_keyed_on_its_code(tmp_path, monkeypatch):
    # A present image built from other extender code (e.g. without --health-port) must not be reused.
    import shutil

    from scheduler_build import resources
    from scheduler_build.image import extender as extender_image

    copy = tmp_path / "scheduler_build"
    shutil.copytree(str(resources.package()), copy, ignore=shutil.ignore_patterns("__pycache__"))
    installed = extender_image.source_digest()
    monkeypatch.setattr(resources, "package", lambda: copy)
    assert extender_image.source_digest() == installed and len(installed) == 16  # same code, same key

    def edited(path: Path) -> str:
        original = path.read_bytes()
        path.write_bytes(original + b"\n# one byte more\n")
        try:
            return extender_image.source_digest()
        finally:
            path.write_bytes(original)

    assert edited(copy / "extender" / "protocol.py") != installed  # the extender's own code
    assert edited(copy / "errors.py") != installed  # code outside extender/ that it imports
    assert edited(copy / "build" / "pipeline.py") == installed  # negative control: code the image does not hold
    monkeypatch.setattr(extender_image, "runtime_wheels", lambda: ["msgspec>=99"])
    assert extender_image.source_digest() != installed  # a new pin of its wheels


@pytest.mark.parametrize("argv", [["--port", "8888", "--health-port", "8888"], ["--health-port", "70000"]])
def test_a_bad_health_port_is_one_clear_error(argv):
    from scheduler_build.extender import cli

    with pytest.raises(UserError, match="--health-port"):
        cli.config_from(cli.parser().parse_args(argv))
