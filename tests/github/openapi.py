"""Validation of the fake server's responses against GitHub's OpenAPI description (`@octokit/openapi`)."""

from __future__ import annotations

import copy
import json
from functools import cache, lru_cache

from jsonschema import Draft4Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT4

from tests.conftest import NPM

SPEC = NPM / "@octokit" / "openapi" / "generated" / "api.github.com.json"
_BASE = "urn:github-openapi"


def _nullable_to_json_schema(node) -> None:
    """OpenAPI 3.0's `nullable: true` → JSON Schema's null type, in place (jsonschema ignores `nullable`)."""
    if isinstance(node, dict):
        for value in node.values():
            _nullable_to_json_schema(value)
        if node.pop("nullable", False) is True:
            if isinstance(node.get("type"), str):
                node["type"] = [node["type"], "null"]
                if "enum" in node:
                    node["enum"] = [*node["enum"], None]
            else:
                inner = dict(node)
                node.clear()
                node["anyOf"] = [inner, {"type": "null"}]
    elif isinstance(node, list):
        for value in node:
            _nullable_to_json_schema(value)


@lru_cache(maxsize=1)
def _spec() -> tuple[dict, Registry]:
    spec = json.loads(SPEC.read_text(encoding="utf-8"))
    _nullable_to_json_schema(spec)
    return spec, Registry().with_resource(_BASE, Resource(spec, specification=DRAFT4))


def example(name: str) -> dict:
    """A deep copy of one of the description's own response examples (`components/examples/<name>`)."""
    return copy.deepcopy(_spec()[0]["components"]["examples"][name]["value"])


def _pointer(*parts: str) -> str:
    return "/".join(p.replace("~", "~0").replace("/", "~1") for p in parts)


@cache
def validator_for(template: str, method: str, status: int) -> Draft4Validator | None:
    """The validator of one endpoint's response (cached), None when the response has no JSON body.

    A status the endpoint does not document (an injected 502, a rate-limit 403) is checked
    against `basic-error`, the shape GitHub gives all its error bodies.
    """
    spec, registry = _spec()
    operation = spec["paths"].get(template, {}).get(method.lower())
    if operation is None:
        raise KeyError(f"{method} {template} is not in GitHub's OpenAPI description")
    response = operation["responses"].get(str(status))
    if response is None:
        if status < 400:
            raise KeyError(f"{method} {template} does not document status {status}")
        ref = f"{_BASE}#/components/schemas/basic-error"
    else:
        if "$ref" in response:  # a shared response such as #/components/responses/not_found
            response = spec["components"]["responses"][response["$ref"].rsplit("/", 1)[1]]
        if "application/json" not in response.get("content", {}):
            return None
        ref = f"{_BASE}#/" + _pointer(
            "paths", template, method.lower(), "responses", str(status), "content", "application/json", "schema"
        )
        if "$ref" in operation["responses"][str(status)]:
            name = operation["responses"][str(status)]["$ref"].rsplit("/", 1)[1]
            ref = f"{_BASE}#/" + _pointer("components", "responses", name, "content", "application/json", "schema")
    return Draft4Validator({"$ref": ref}, registry=registry)


def problems(template: str, method: str, status: int, body: bytes) -> list[str]:
    """What is wrong with one response (empty when it validates)."""
    validator = validator_for(template, method, status)
    if validator is None:
        return [] if not body else [f"{method} {template} {status}: a body where the description has none"]
    try:
        data = json.loads(body)
    except ValueError:
        return [f"{method} {template} {status}: body is not JSON"]
    return [
        f"{method} {template} {status} at {'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message[:200]}"
        for e in validator.iter_errors(data)
    ]
