"""The distribution API (OCI registry HTTP API v2) client every registry use shares: the target
(HOST[:PORT]/REPO), authentication (the token dance, credentials from engine/credentials.py), TLS or plain
HTTP, retries with backoff, and blob and manifest reads and writes; plus the tag-schema referrers index.

publish/registry.py pushes a layout with it, publish/chart.py a chart, publish/sign.py signatures, and
publish/verify.py reads them back. Credentials live in memory only: never logged, never written, never
part of an error message.
"""

from __future__ import annotations

import ipaddress
import json
import re
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import requests

from scheduler_build.image import oci
from scheduler_build.engine.credentials import CERTS_D, PASSWORD_ENV, USER_ENV, engine_ca
from scheduler_build.errors import UserError
from scheduler_build.progress import log

_REPO_RE = re.compile(r"^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*$")
_HOST_RE = re.compile(r"^(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*|\[[0-9a-fA-F:]+\])(?::[0-9]{1,5})?$")


class AuthFailed(UserError):
    """The registry refused the credentials (or wanted some): retrying cannot help."""


class Transient(Exception):
    """A failure worth retrying: connection refused/reset, timeout, 5xx, 429."""


@dataclass(frozen=True)
class Target:
    host: str  # host[:port]
    repository: str

    @property
    def name(self) -> str:
        return f"{self.host}/{self.repository}"


def parse_target(text: str) -> Target:
    text = (text or "").strip()
    if not text:
        raise UserError("no registry given", "pass --registry HOST[:PORT]/REPO or set registry.url, e.g. 127.0.0.1:5000/acme/kube-scheduler")
    if "://" in text:
        raise UserError(f"--registry {text!r} must not have a scheme", "use HOST[:PORT]/REPO, e.g. registry.example.com/acme/kube-scheduler")
    if "@" in text or (":" in text.split("/")[-1] and "/" in text):
        raise UserError(f"--registry {text!r} names a tag or digest", "give the repository only; tags come from the build, e.g. 127.0.0.1:5000/acme/kube-scheduler")
    host, _, repo = text.partition("/")
    if not repo or not _HOST_RE.match(host) or not ("." in host or ":" in host or host == "localhost"):
        raise UserError(f"--registry {text!r} is not HOST[:PORT]/REPO", "e.g. 127.0.0.1:5000/acme/kube-scheduler or ghcr.io/acme/kube-scheduler")
    if not _REPO_RE.match(repo):
        raise UserError(f"--registry: repository {repo!r} is not a valid name", "lowercase letters, digits and separators (. _ -), path components joined by /")
    return Target(host, repo)


def is_loopback(host: str) -> bool:
    name = host.rsplit(":", 1)[0].strip("[]") if host.count(":") <= 1 or host.startswith("[") else host
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


@dataclass
class Client:
    target: Target
    creds: tuple[str, str] | None = None
    ca_cert: str = ""
    insecure: bool = False  # allow plain HTTP (always allowed for loopback, like the engine)
    retries: int = 4
    backoff: float = 0.5
    timeout: float = 60.0
    sleep: Callable[[float], None] = time.sleep
    on_event: Callable[[str, str], None] | None = None  # (event, detail), for tests and progress
    read_only: bool = False  # image.verify: nothing is pushed, so no hint about re-running a push
    base: str = ""
    session: requests.Session = field(default_factory=requests.Session)
    _token: str = ""

    # -- connection and authentication -----------------------------------------------------

    def _verify(self):
        if self.ca_cert:
            return self.ca_cert
        ca = engine_ca(self.target.host)
        return str(ca) if ca else True

    def connect(self) -> None:
        """Find the scheme (HTTPS, or HTTP where allowed) and authenticate against /v2/."""
        schemes = ["https"]
        if self.insecure or is_loopback(self.target.host):
            schemes.append("http")
        last = ""
        for scheme in schemes:
            base = f"{scheme}://{self.target.host}"
            try:
                response = self._retrying("ping", lambda: self.session.get(f"{base}/v2/", timeout=self.timeout, verify=self._verify()))
            except requests.exceptions.SSLError as exc:
                last = f"TLS: {_reason(exc)}"
                continue
            self.base = base
            if response.status_code == 401:
                self._authenticate(response)
                try:
                    self._request("GET", "/v2/")
                except AuthFailed:
                    raise AuthFailed(f"{self.target.host} rejected the credentials", f"check {USER_ENV}/{PASSWORD_ENV} or `docker login {self.target.host}`") from None
            elif response.status_code != 200:
                if last:
                    # Plain HTTP to a TLS port: the TLS failure is the real story.
                    break
                raise UserError(f"{base}/v2/ answered {response.status_code}: not a registry (distribution API v2)", "check the --registry host and port")
            return
        hint = f"put the registry's CA at {CERTS_D}/{self.target.host}/ca.crt (as the engine expects) or pass --ca-cert"
        if not is_loopback(self.target.host) and not self.insecure:
            hint += "; --insecure allows plain HTTP"
        raise UserError(f"cannot talk TLS to {self.target.host}: {last}", hint)

    def _authenticate(self, response: requests.Response) -> None:
        challenge = response.headers.get("WWW-Authenticate", "")
        if not self.creds:
            raise AuthFailed(f"{self.target.host} requires authentication and no credentials were found",
                             f"`docker login {self.target.host}`, or set {USER_ENV} and {PASSWORD_ENV}")
        scheme, _, params = challenge.partition(" ")
        if scheme.lower() == "basic":
            self.session.auth = self.creds
            return
        if scheme.lower() == "bearer":
            fields = dict(re.findall(r'(\w+)="([^"]*)"', params))
            query = {"service": fields.get("service", ""), "scope": f"repository:{self.target.repository}:pull,push"}
            token_response = self._retrying("token", lambda: self.session.get(fields.get("realm", ""), params=query, auth=self.creds, timeout=self.timeout, verify=self._verify()))
            if token_response.status_code in (401, 403):
                raise AuthFailed(f"{self.target.host}'s token service rejected the credentials", f"check {USER_ENV}/{PASSWORD_ENV} or `docker login {self.target.host}`")
            if token_response.status_code != 200:
                raise UserError(f"{self.target.host}'s token service answered {token_response.status_code}")
            body = token_response.json()
            self._token = body.get("token") or body.get("access_token") or ""
            return
        raise UserError(f"{self.target.host} asks for unsupported authentication {scheme!r}", "basic and bearer-token registries are supported")

    def _request(self, method: str, path: str, **kwargs) -> requests.Response:
        url = path if path.startswith("http") else f"{self.base}{path}"
        headers = kwargs.pop("headers", {})
        if self._token:
            headers["Authorization"] = f"Bearer {self._token}"
        response = self.session.request(method, url, headers=headers, timeout=self.timeout, verify=self._verify(), **kwargs)
        if response.status_code in (401, 403):
            raise AuthFailed(f"{self.target.host} refused {method} {urllib.parse.urlsplit(url).path} ({response.status_code})",
                             f"the credentials lack push access to {self.target.repository}")
        if response.status_code >= 500 or response.status_code == 429:
            raise Transient(f"{method} {urllib.parse.urlsplit(url).path}: {response.status_code}")
        return response

    def _retrying(self, what: str, call: Callable[[], requests.Response]) -> requests.Response:
        """Bounded retries with exponential backoff; auth failures and 4xx are final."""
        delay = self.backoff
        for attempt in range(1, self.retries + 2):
            try:
                return call()
            except requests.exceptions.SSLError:
                raise
            except (requests.exceptions.ConnectionError, requests.exceptions.Timeout, requests.exceptions.ChunkedEncodingError, Transient) as exc:
                if attempt > self.retries:
                    hint = ("is the registry up? verifying only reads, so run it again when the registry answers"
                            if self.read_only else "is the registry up? nothing was tagged, so re-running the push is safe")
                    raise UserError(f"{what} to {self.target.host} failed after {attempt} attempts: {_reason(exc)}",
                                    hint) from None
                log(f"    {what}: {_reason(exc)}; retry {attempt}/{self.retries} in {delay:.1f}s")
                self._event("retry", what)
                self.sleep(delay)
                delay = min(delay * 2, 8.0)
        raise AssertionError("unreachable")

    def _event(self, event: str, detail: str) -> None:
        if self.on_event is not None:
            self.on_event(event, detail)

    # -- blobs and manifests -------------------------------------------------------------

    def has_blob(self, digest: str) -> bool:
        response = self._retrying(f"check {digest[:19]}", lambda: self._request("HEAD", f"/v2/{self.target.repository}/blobs/{digest}"))
        return response.status_code == 200

    def push_blob(self, path: Path, digest: str) -> bool:
        """Upload one blob (monolithic PUT); True if uploaded, False if already present."""
        if self.has_blob(digest):
            return False

        def attempt() -> requests.Response:
            started = self._request("POST", f"/v2/{self.target.repository}/blobs/uploads/")
            if started.status_code != 202 or "Location" not in started.headers:
                raise UserError(f"{self.target.host} would not start an upload ({started.status_code})")
            location = urllib.parse.urljoin(self.base + "/", started.headers["Location"])
            location += ("&" if "?" in location else "?") + urllib.parse.urlencode({"digest": digest})
            with open(path, "rb") as handle:
                body = _ReportingReader(handle, path.stat().st_size, lambda n: self._event("bytes", f"{digest}:{n}"))
                done = self._request("PUT", location, data=body, headers={"Content-Type": "application/octet-stream"})
            if done.status_code != 201:
                raise UserError(f"upload of {digest[:19]} to {self.target.host} answered {done.status_code}: {done.text[:200]}")
            return done

        self._retrying(f"upload {digest[:19]}", attempt)
        self._event("blob", digest)
        return True

    def put_manifest(self, reference: str, data: bytes, media_type: str) -> str:
        expected = oci.digest_of(data)
        response = self._retrying(f"manifest {reference[:26]}", lambda: self._request(
            "PUT", f"/v2/{self.target.repository}/manifests/{reference}", data=data, headers={"Content-Type": media_type}))
        if response.status_code != 201:
            raise UserError(f"{self.target.host} rejected manifest {reference[:26]} ({response.status_code}): {response.text[:300]}")
        returned = response.headers.get("Docker-Content-Digest", expected)
        if returned != expected:
            raise UserError(f"{self.target.host} stored manifest {reference[:26]} as {returned}, expected {expected}")
        self._event("manifest", reference)
        return expected

    def get_manifest(self, reference: str, media_types: list[str]) -> tuple[bytes, str]:
        response = self._retrying(f"read {reference[:26]}", lambda: self._request(
            "GET", f"/v2/{self.target.repository}/manifests/{reference}", headers={"Accept": ", ".join(media_types)}))
        if response.status_code != 200:
            raise UserError(f"{self.target.name}:{reference} is not in the registry ({response.status_code})")
        return response.content, response.headers.get("Content-Type", "")

    def get_blob(self, digest: str) -> bytes:
        response = self._retrying(f"read {digest[:19]}", lambda: self._request("GET", f"/v2/{self.target.repository}/blobs/{digest}"))
        if response.status_code != 200:
            raise UserError(f"blob {digest} is not in {self.target.name} ({response.status_code})")
        return response.content


class _ReportingReader:
    """A file body for requests with a known length that reports progress per chunk."""

    def __init__(self, handle, size: int, report: Callable[[int], None]):
        self.handle, self.size, self.report, self.sent = handle, size, report, 0

    def __len__(self) -> int:
        return self.size

    def read(self, amount: int = -1) -> bytes:
        data = self.handle.read(1 << 20 if amount is None or amount < 0 else amount)
        if data:
            self.sent += len(data)
            self.report(self.sent)
        return data


def _reason(exc: BaseException) -> str:
    text = str(exc)
    # requests' messages can be long nested reprs; keep the innermost reason.
    match = re.search(r"\[Errno -?\d+\] ([^'\")]+)|(Connection refused|Connection reset by peer|Read timed out|RemoteDisconnected[^'\")]*)", text)
    if match:
        return (match.group(1) or match.group(2)).strip()
    return text.splitlines()[0][:200] if text else exc.__class__.__name__


def merged_referrers(client: Client, subject: str, ours: dict) -> bytes:
    """The referrers-tag index with our SBOM added, keeping what others listed (signatures...)."""
    entries = [ours]
    try:
        body, _ = client.get_manifest(referrers_tag(subject), [oci.INDEX])
        existing = json.loads(body).get("manifests") or []
        entries = [e for e in existing if isinstance(e, dict) and e.get("digest") != ours["digest"]] + [ours]
    except (UserError, ValueError):
        pass  # no index yet (404) or not one of ours: start a new one
    entries.sort(key=lambda e: (e.get("artifactType", ""), e.get("digest", "")))
    return oci.canonical({"schemaVersion": 2, "mediaType": oci.INDEX, "manifests": entries})


def referrers_tag(digest: str) -> str:
    algorithm, _, hexpart = digest.partition(":")
    return f"{algorithm}-{hexpart}"

