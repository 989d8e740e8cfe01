"""Unit tests: version parsing, choosing and nearest-version errors (pure)."""

import pytest

from scheduler_build.resolve import versions
from scheduler_build.errors import UserError

# The version list the Go module proxy served for k8s.io/kubernetes (real, sparse).
PROXY_LIST = (
    "v1.13.0 v1.29.6 v1.30.4 v1.30.14 v1.31.0 v1.31.14 v1.32.2 v1.32.13 v1.33.6 v1.33.13 "
    "v1.34.0 v1.34.2 v1.34.3 v1.34.4 v1.35.4 v1.36.1 v1.36.3 v1.37.0-rc.1 v1.37.2 v1.38.0-alpha.1"
).split()


@pytest.mark.parametrize(
    "text, minor, patch, pre",
    [("1.36", 36, None, None), ("v1.36", 36, None, None), ("v1.36.2", 36, 2, None),
     ("1.36.2", 36, 2, None), ("v1.37.0-rc.1", 37, 0, "rc.1"), (" v1.35.4 ", 35, 4, None)],
)
def test_parse_accepts_the_documented_forms(text, minor, patch, pre):
    request = versions.parse_request(text)
    assert (request.minor, request.patch, request.pre) == (minor, patch, pre)


def test_parse_latest():
    assert versions.parse_request("latest").minor is None


@pytest.mark.parametrize("text", ["", "foo", "1", "v1.36.x", "1.36.2.1", "v2.0.0", "1.36-rc.1", "v1..3"])
def test_parse_rejects_malformed(text):
    with pytest.raises(UserError) as info:
        versions.parse_request(text)
    assert repr(text.strip()) in str(info.value) or repr(text) in str(info.value)


def test_minor_resolves_to_newest_patch():
    assert versions.choose(versions.parse_request("1.36"), PROXY_LIST) == "v1.36.3"
    assert versions.choose(versions.parse_request("v1.34"), PROXY_LIST) == "v1.34.4"


def test_latest_is_newest_release_not_prerelease():
    assert versions.choose(versions.parse_request("latest"), PROXY_LIST) == "v1.37.2"


def test_supported_minors_are_derived_not_hardwired():
    assert versions.supported_minors(PROXY_LIST) == ["1.37", "1.36", "1.35", "1.34"]
    assert versions.supported_minors(PROXY_LIST + ["v1.38.0"]) == ["1.38", "1.37", "1.36", "1.35"]


def test_exact_version_and_prerelease_of_upcoming_minor():
    assert versions.choose(versions.parse_request("v1.36.1"), PROXY_LIST) == "v1.36.1"
    assert versions.choose(versions.parse_request("v1.37.0-rc.1"), PROXY_LIST) == "v1.37.0-rc.1"
    assert versions.choose(versions.parse_request("v1.38.0-alpha.1"), PROXY_LIST) == "v1.38.0-alpha.1"


def test_unknown_patch_names_nearest_of_same_minor():
    with pytest.raises(UserError) as info:
        versions.choose(versions.parse_request("v1.36.2"), PROXY_LIST)
    text = str(info.value)
    assert "'v1.36.2'" in text and "v1.36.1" in text and "v1.36.3" in text
    assert "\n" not in text


def test_unknown_minor_names_nearest_releases():
    with pytest.raises(UserError) as info:
        versions.choose(versions.parse_request("1.40"), PROXY_LIST)
    assert "'1.40'" in str(info.value) and "v1.37.2" in str(info.value)


def test_minor_with_only_prereleases_says_so():
    with pytest.raises(UserError) as info:
        versions.choose(versions.parse_request("1.38"), PROXY_LIST)
    assert "v1.38.0-alpha.1" in str(info.value)


def test_old_minor_is_unsupported_with_the_supported_list():
    with pytest.raises(UserError) as info:
        versions.choose(versions.parse_request("1.29"), PROXY_LIST)
    assert "1.34 (v1.34.4)" in str(info.value)


def test_semver_ordering():
    ordered = sorted(["v1.37.0", "v1.37.0-rc.1", "v1.37.0-alpha.2", "v1.36.10", "v1.36.9", "v1.37.0-rc.0"], key=versions.semver_key)
    assert ordered == ["v1.36.9", "v1.36.10", "v1.37.0-alpha.2", "v1.37.0-rc.0", "v1.37.0-rc.1", "v1.37.0"]
