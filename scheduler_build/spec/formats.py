"""The value formats a build spec is checked against (pure patterns; version-dependent vocabularies are\nderived from the target release by resolve.vocabulary)."""

from __future__ import annotations

import re

DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
GO_IDENT = re.compile(r"^[A-Z][A-Za-z0-9_]*$")  # exported Go identifier
GO_IMPORT_PATH = re.compile(r"^[a-zA-Z0-9][-a-zA-Z0-9_.~]*(\.[a-zA-Z]{2,})?(/[-a-zA-Z0-9_.~+]+)*$")
GO_MODULE_VERSION = re.compile(r"^v\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+incompatible)?$")
K8S_VERSION = re.compile(r"^(latest|v?\d+\.\d+(\.\d+)?)$")
SEMVERISH = re.compile(r"^[0-9A-Za-z][0-9A-Za-z.-]*$")  # no '+': it is not allowed in image tags
SUFFIX = re.compile(r"^[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*$")
# Go's time.ParseDuration units; a bare "0" is also valid Go.
DURATION = re.compile(r"^(0|([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+)$")
IMAGE_REPO = re.compile(r"^[a-z0-9]+([._-][a-z0-9]+)*(:[0-9]+)?(/[a-z0-9]+([._-][a-z0-9]+)*)*$")
IMAGE_TAG = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$")
IMAGE_REF = re.compile(r"^[a-z0-9][a-z0-9._/:-]*(@sha256:[0-9a-f]{64})?$")  # repository[:tag][@digest]
QUANTITY = re.compile(r"^[0-9]+(\.[0-9]+)?(m|k|Ki|Mi|Gi|Ti|M|G|T)?$")
HTTP_URL = re.compile(r"^https?://[^\s/]+")
# SBOM parties: SPDX writes `Organization: <name> (<email>)`, so a name holds no parentheses.
PARTY_NAME = re.compile(r"^[^()\n\r]*[^()\s][^()\n\r]*$")
EMAIL = re.compile(r"^[^@\s()<>]+@[^@\s()<>]+\.[^@\s()<>]+$")
URL_PATH_SEGMENT = re.compile(r"^[A-Za-z0-9._~/-]+$")

# The form of an extension point's key (a JSON field of the v1 Plugins struct). Which points exist is the
# target release's own: resolve.vocabulary reads them from its source, config.api_fields checks them.
EXTENSION_POINT = re.compile(r"^[a-z][A-Za-z0-9]*$")
PULL_POLICIES = ("Always", "IfNotPresent", "Never")
