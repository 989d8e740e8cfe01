"""The legacy Policy's vocabulary and what each name became in v1 (pure tables).

Follows the upstream legacy registry (pkg/scheduler/framework/plugins/legacy_registry.go
of 1.22) and the plugins removed since.
"""

from __future__ import annotations


class Note(str):
    """Informational: the translation does exactly what the Policy did, said for the reader.

    Everything else appended to the findings is a warning: part of the Policy had no exact
    v1 equivalent, so behaviour may differ (`--strict` fails on those only)."""


POLICY_HINT = "a Policy is {\"kind\": \"Policy\", \"apiVersion\": \"v1\", \"predicates\": [...], \"priorities\": [...], \"extenders\": [...]}"

# Plugins every profile keeps although a Policy never named them (queue sort, binding, preemption, gates).
ALWAYS_ON = ("PrioritySort", "SchedulingGates", "DefaultBinder", "DefaultPreemption")

# predicate -> plugins (filter side). Upstream treated these two as mandatory in every Policy.
PREDICATES: dict[str, tuple[str, ...]] = {
    "PodFitsResources": ("NodeResourcesFit",),
    "PodFitsHostPorts": ("NodePorts",),
    "PodFitsPorts": ("NodePorts",),
    "HostName": ("NodeName",),
    "MatchNodeSelector": ("NodeAffinity",),
    "GeneralPredicates": ("NodeResourcesFit", "NodeName", "NodePorts", "NodeAffinity"),
    "CheckNodeUnschedulable": ("NodeUnschedulable",),
    "PodToleratesNodeTaints": ("TaintToleration",),
    "NoDiskConflict": ("VolumeRestrictions",),
    "NoVolumeZoneConflict": ("VolumeZone",),
    "MaxCSIVolumeCountPred": ("NodeVolumeLimits",),
    "CheckVolumeBinding": ("VolumeBinding",),
    "MatchInterPodAffinity": ("InterPodAffinity",),
    "EvenPodsSpread": ("PodTopologySpread",),
}
# In-tree volume limits per cloud became CSI limits (CSI migration): same plugin, new name.
PREDICATES_RENAMED: dict[str, tuple[str, str]] = {
    "MaxEBSVolumeCount": ("NodeVolumeLimits", "the AWS EBS limit is enforced through CSI migration by NodeVolumeLimits"),
    "MaxGCEPDVolumeCount": ("NodeVolumeLimits", "the GCE PD limit is enforced through CSI migration by NodeVolumeLimits"),
    "MaxAzureDiskVolumeCount": ("NodeVolumeLimits", "the Azure Disk limit is enforced through CSI migration by NodeVolumeLimits"),
    "MaxCinderVolumeCount": ("NodeVolumeLimits", "the Cinder limit is enforced through CSI migration by NodeVolumeLimits"),
}
PREDICATES_GONE: dict[str, str] = {
    "CheckNodeCondition": "node conditions are taints now (node.kubernetes.io/not-ready, ...), checked by TaintToleration",
    "CheckNodeMemoryPressure": "memory pressure is the node.kubernetes.io/memory-pressure taint, checked by TaintToleration",
    "CheckNodeDiskPressure": "disk pressure is the node.kubernetes.io/disk-pressure taint, checked by TaintToleration",
    "CheckNodePIDPressure": "PID pressure is the node.kubernetes.io/pid-pressure taint, checked by TaintToleration",
    "CheckNodeLabelPresence": "the NodeLabel plugin was removed in 1.24; require the labels with nodeAffinity in the pods instead",
    "CheckServiceAffinity": "the ServiceAffinity plugin was removed in 1.24; use pod affinity instead",
}
MANDATORY_FILTERS = ("NodeUnschedulable", "TaintToleration")

# priority -> (plugin, NodeResourcesFit scoring strategy or None)
PRIORITIES: dict[str, tuple[str, str | None]] = {
    "LeastRequestedPriority": ("NodeResourcesFit", "LeastAllocated"),
    "MostRequestedPriority": ("NodeResourcesFit", "MostAllocated"),
    "RequestedToCapacityRatioPriority": ("NodeResourcesFit", "RequestedToCapacityRatio"),
    "BalancedResourceAllocation": ("NodeResourcesBalancedAllocation", None),
    "InterPodAffinityPriority": ("InterPodAffinity", None),
    "NodeAffinityPriority": ("NodeAffinity", None),
    "TaintTolerationPriority": ("TaintToleration", None),
    "ImageLocalityPriority": ("ImageLocality", None),
    "EvenPodsSpreadPriority": ("PodTopologySpread", None),
}
PRIORITIES_GONE: dict[str, str] = {
    "SelectorSpreadPriority": "SelectorSpread was removed in 1.27; PodTopologySpread's default constraints spread pods of a Service/ReplicaSet instead",
    "ServiceSpreadingPriority": "SelectorSpread was removed in 1.27; PodTopologySpread's default constraints spread pods of a Service instead",
    "NodePreferAvoidPodsPriority": "NodePreferAvoidPods was removed in 1.25 together with the preferAvoidPods annotation",
    "EqualPriority": "it gave every node the same score, which changes nothing",
    "NodeLabelPriority": "the NodeLabel plugin was removed in 1.24; express the preference with preferred nodeAffinity in the pods",
    "ServiceAntiAffinity": "the ServiceAffinity plugin was removed in 1.24; use pod anti-affinity or topology spread constraints",
    "ResourceLimitsPriority": "ResourceLimits was an alpha priority that never became a plugin",
}

POINTS_WITH_FILTER = {  # which points each mapped plugin has besides score, for per-point disables
    "NodeResourcesFit": ("preFilter", "filter", "preScore", "score"),
    "NodePorts": ("preFilter", "filter"),
    "NodeName": ("filter",),
    "NodeAffinity": ("preFilter", "filter", "preScore", "score"),
    "NodeUnschedulable": ("filter",),
    "TaintToleration": ("filter", "preScore", "score"),
    "VolumeRestrictions": ("preFilter", "filter"),
    "VolumeZone": ("preFilter", "filter"),
    "NodeVolumeLimits": ("preFilter", "filter"),
    "VolumeBinding": ("preFilter", "filter", "reserve", "preBind", "preScore", "score"),
    "InterPodAffinity": ("preFilter", "filter", "preScore", "score"),
    "PodTopologySpread": ("preFilter", "filter", "preScore", "score"),
    "NodeResourcesBalancedAllocation": ("preScore", "score"),
    "ImageLocality": ("score",),
}
FILTER_POINTS = ("preFilter", "filter")
SCORE_POINTS = ("preScore", "score")

EXTENDER_FIELDS = {  # lower-case legacy key -> v1 key (Go's JSON decoding ignored case)
    "urlprefix": "urlPrefix", "filterverb": "filterVerb", "preemptverb": "preemptVerb",
    "prioritizeverb": "prioritizeVerb", "bindverb": "bindVerb", "weight": "weight",
    "enablehttps": "enableHTTPS", "tlsconfig": "tlsConfig", "httptimeout": "httpTimeout",
    "nodecachecapable": "nodeCacheCapable", "managedresources": "managedResources", "ignorable": "ignorable",
}
TLS_FIELDS = {k.lower(): k for k in ("insecure", "serverName", "certFile", "keyFile", "caFile", "certData", "keyData", "caData")}
