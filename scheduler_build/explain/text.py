"""The explain document as an operator reads it (pure)."""

from __future__ import annotations


def _pod(doc: dict) -> str:
    pod = doc["pod"]
    return f"pod {pod['namespace']}/{pod['name']} (scheduler {pod['schedulerName']})"


def _score_lines(doc: dict) -> list[str]:
    lines = [f"top {len(doc['topNodes'])} node(s) by score (raw -> normalized x weight = weighted):"]
    for n in doc["topNodes"]:
        mark = "  <- chosen" if n["chosen"] else ""
        lines.append(f"  {n['node']}: total {n['total']}{mark}")
        for p in n["plugins"]:
            def show(v: object) -> str:
                return "?" if v is None else str(v)
            lines.append(f"    {p['plugin']}: {show(p['raw'])} -> {show(p['normalized'])} x {show(p['weight'])}"
                         f" = {show(p['weighted'])}")
    return lines


def _rejection_lines(doc: dict) -> list[str]:
    """Per plugin, most nodes first: one line when its nodes share a reason, else one line per reason."""
    by_plugin: dict[str, list[dict]] = {}
    for g in doc["rejections"]:
        by_plugin.setdefault(g["plugin"], []).append(g)
    lines = []
    for plugin, groups in sorted(by_plugin.items(), key=lambda kv: (-sum(g["count"] for g in kv[1]), kv[0])):
        total = sum(g["count"] for g in groups)
        if len(groups) == 1:
            lines.append(f"  {_nodes(total)}: {plugin}: {groups[0]['reason']}{_named(groups[0])}")
            continue
        lines.append(f"  {_nodes(total)}: {plugin}:")
        lines += [f"      {g['count']}: {g['reason']}{_named(g)}" for g in groups]
    unnamed = doc["rejectedNodes"] - len(doc["filteredNodes"])
    if unnamed > 0:
        lines.append(f"  ({unnamed} rejected node(s) not named: the recorder's rejectedNodes limit)")
    return lines


def _nodes(count: int) -> str:
    return f"{count} node{'s' if count != 1 else ''}"


def _named(group: dict) -> str:
    return f" ({', '.join(group['nodes'])})" if group["nodes"] else ""


def _extender_lines(doc: dict) -> list[str]:
    lines = []
    for e in doc.get("extenders", []):
        said = []
        if e["passed"] is not None:
            said.append(f"filter kept {e['passed']}, removed {e['failed'] or 0}")
        if e["scored"] is not None:
            said.append(f"scored {e['scored']} (weight {e['weight']})")
        if e["error"]:
            said.append(f"error: {e['error']}")
        lines.append(f"extender {e['extender']}: {'; '.join(said) or 'called'}")
    return lines


def render(doc: dict) -> str:
    """Several lines; a pod with no record gets one line saying what to deploy."""
    if not doc["recorded"]:
        return f"{_pod(doc)}: {doc['hint']}"
    head = f"{_pod(doc)}, recorded by {doc['scheduler'] or '?'} (profile {doc['profile'] or '?'}) at {doc['recordedAt'] or '?'}"
    lines = [head]
    if doc["stale"]:
        lines.append(f"  note: the pod is on {doc['pod']['nodeName']}, the record is of an earlier attempt")
    if doc["outcome"] == "bound":
        lines.append(f"bound to {doc['chosenNode']} ({doc['feasibleNodes'] or 1} feasible, {doc['rejectedNodes']} filtered out)")
        if doc["topNodes"]:
            lines += _score_lines(doc)
        else:
            lines.append("  no scores: one node was feasible (or a batching hint placed it), so scoring did not run")
        if doc["rejections"]:
            lines.append("filtered out:")
            lines += _rejection_lines(doc)
    else:
        lines.append(f"unschedulable: {doc['rejectedNodes']} node(s) rejected, {doc['feasibleNodes']} feasible")
        lines += _rejection_lines(doc)
        failed = {k: v for k, v in doc["preFilter"].items() if v not in ("success", "skip")}
        if failed:
            lines.append("prefilter: " + ", ".join(f"{k}: {v}" for k, v in sorted(failed.items())))
        if doc["postFilter"]:
            lines.append("postfilter: " + "; ".join(f"{k}: {v}" for k, v in sorted(doc["postFilter"].items())))
        if doc["nominatedNode"]:
            lines.append(f"  preemption nominated {doc['nominatedNode']}")
    lines += _extender_lines(doc)
    for w in doc["warnings"]:
        lines.append(f"warning: {w}")
    return "\n".join(lines)
