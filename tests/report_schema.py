"""A small JSON Schema validator (the subset docs/report.schema.json uses: type, const, enum,
required, properties, items, minItems, maxItems, minimum, pattern, $ref to #/$defs), so the
tests need no jsonschema package. validate(instance, schema) -> list of problems."""
import json
import os
import re

SCHEMA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "report.schema.json")

_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def validate(v, s, root=None, path="$"):
    root = s if root is None else root
    if "$ref" in s:
        ref = s["$ref"]
        assert ref.startswith("#/$defs/"), ref
        return validate(v, root["$defs"][ref[len("#/$defs/"):]], root, path)
    out = []
    if "type" in s:
        types = s["type"] if isinstance(s["type"], list) else [s["type"]]
        if not any(_TYPES[t](v) for t in types):
            return [f"{path}: {type(v).__name__} {v!r:.60} is not {'/'.join(types)}"]
    if "const" in s and v != s["const"]:
        out.append(f"{path}: {v!r} is not {s['const']!r}")
    if "enum" in s and v not in s["enum"]:
        out.append(f"{path}: {v!r} is not one of {s['enum']}")
    if isinstance(v, dict):
        out += [f"{path}: lacks {k!r}" for k in s.get("required", []) if k not in v]
        for k, sub in s.get("properties", {}).items():
            if k in v:
                out += validate(v[k], sub, root, f"{path}.{k}")
    if isinstance(v, list):
        if len(v) < s.get("minItems", 0) or len(v) > s.get("maxItems", len(v)):
            out.append(f"{path}: {len(v)} items")
        if "items" in s:
            for i, x in enumerate(v):
                out += validate(x, s["items"], root, f"{path}[{i}]")
    if _TYPES["number"](v) and "minimum" in s and v < s["minimum"]:
        out.append(f"{path}: {v} < {s['minimum']}")
    if isinstance(v, str) and "pattern" in s and not re.search(s["pattern"], v):
        out.append(f"{path}: {v!r} does not match {s['pattern']}")
    return out


def validate_report(report):
    with open(SCHEMA) as f:
        return validate(report, json.load(f))
