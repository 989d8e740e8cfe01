"""The node's registry host configuration (cluster/pull_hosts.py): URLs checked before anything
starts, and hosts.toml files that containerd can read (parsed back with tomllib here; the node
test pulls through them from a real registry)."""

from __future__ import annotations

try:
    import tomllib
except ImportError:  # Python 3.10: the same parser, from PyPI (the test extra)
    import tomli as tomllib

import pytest

from scheduler_build.cluster import pull_hosts
from scheduler_build.errors import UserError

PEM = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"


@pytest.mark.parametrize("url, message", [
    ("127.0.0.1:5000", "say how the node reaches it"),
    ("ftp://127.0.0.1:5000", "the scheme must be http or https"),
    ("http://user:pw@127.0.0.1:5000", "credentials do not belong in the URL"),
    ("http://127.0.0.1:5000/acme/app", "only scheme, host and port"),
    ("http://127.0.0.1:5000?x=1", "only scheme, host and port"),
    ("http://127.0.0.1:99999", "port is not a number"),
    ("http://127.0.0.1:abc", "port is not a number"),
    ("http://", "no host"),
])
def test_bad_registry_urls_are_one_clear_error(url, message):
    with pytest.raises(UserError, match=message) as err:
        pull_hosts.parse([url])
    assert url in str(err.value)


def test_a_host_named_as_http_and_https_is_refused():
    with pytest.raises(UserError, match="both http and https"):
        pull_hosts.parse(["http://127.0.0.1:5000", "https://127.0.0.1:5000"])


def test_registry_ca_needs_an_https_registry_and_a_pem(tmp_path):
    ca = tmp_path / "ca.crt"
    ca.write_text(PEM)
    with pytest.raises(UserError, match="no https registry"):
        pull_hosts.parse(["http://127.0.0.1:5000"], str(ca))
    (tmp_path / "junk").write_text("not a cert")
    with pytest.raises(UserError, match="not a PEM certificate"):
        pull_hosts.parse(["https://127.0.0.1:5443"], str(tmp_path / "junk"))
    with pytest.raises(UserError, match="cannot read it"):
        pull_hosts.parse(["https://127.0.0.1:5443"], str(tmp_path / "missing.crt"))


def test_hosts_toml_is_valid_toml_naming_the_server_and_ca(tmp_path):
    ca = tmp_path / "ca.crt"
    ca.write_text(PEM)
    parsed = pull_hosts.parse(["http://127.0.0.1:5000", " ", "https://registry.local:5443", "http://127.0.0.1:5000"],
                              str(ca))
    assert [(r.host, r.scheme) for r in parsed] == [("127.0.0.1:5000", "http"), ("registry.local:5443", "https")]
    certs = tmp_path / "certs.d"
    written = pull_hosts.write(certs, parsed)
    assert written == [certs / "127.0.0.1:5000" / "hosts.toml", certs / "registry.local:5443" / "hosts.toml"]
    plain = tomllib.loads(written[0].read_text())
    assert plain == {"server": "http://127.0.0.1:5000",
                     "host": {"http://127.0.0.1:5000": {"capabilities": ["pull", "resolve"]}}}
    tls = tomllib.loads(written[1].read_text())
    copied = certs / "registry.local:5443" / "ca.crt"
    assert tls["host"]["https://registry.local:5443"]["ca"] == str(copied)
    assert copied.read_text() == PEM


def test_hostile_characters_stay_inside_toml_strings(tmp_path):
    """A CA path with quotes and newlines cannot inject TOML keys."""
    odd = tmp_path / 'ca "x"\n[host.evil]'
    odd.mkdir(parents=True)
    reg = pull_hosts.NodeRegistry(host="127.0.0.1:5443", scheme="https", ca="")
    text = pull_hosts.hosts_toml(reg, str(odd / "ca.crt"))
    data = tomllib.loads(text)
    assert set(data) == {"server", "host"} and set(data["host"]) == {"https://127.0.0.1:5443"}
    assert data["host"]["https://127.0.0.1:5443"]["ca"] == str(odd / "ca.crt")


def test_ipv6_hosts_keep_their_brackets():
    (reg,) = pull_hosts.parse(["http://[::1]:5000"])
    assert reg.host == "[::1]:5000" and reg.server == "http://[::1]:5000"
