"""Validates JSON bodies against loadlab's schemas/ with a real validator.

    import schemacheck
    schemacheck.validate("job.json", body)   # raises SchemaError on mismatch

Uses Debian's python3-jsonschema (4.10, draft 2020-12). Every schema has an
$id under https://loadlab.invalid/schemas/ and refers to the others by
relative file name ("defs.json#/$defs/TASK"); those references are resolved
from the files in schemas/, never from the network.
"""
import json
import os

import jsonschema

SOURCE_DIR = os.environ.get("LOADLAB_SOURCE_DIR",
                            os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))
SCHEMAS = os.path.join(SOURCE_DIR, "schemas")
EXAMPLES = os.path.join(SCHEMAS, "examples")
BASE_URI = "https://loadlab.invalid/schemas/"
Validator = jsonschema.Draft202012Validator


class SchemaError(AssertionError):
    """An instance does not match its schema; the message says where and why."""


_schemas = None


def schema_names():
    """The file names of every schema in schemas/ (not the examples)."""
    return sorted(n for n in os.listdir(SCHEMAS) if n.endswith(".json"))


def load_all():
    """Loads every schema once; returns {file name: schema}."""
    global _schemas
    if _schemas is None:
        loaded = {}
        for name in schema_names():
            with open(os.path.join(SCHEMAS, name)) as f:
                loaded[name] = json.load(f)
        _schemas = loaded
    return _schemas


def _refuse_remote(uri):
    raise SchemaError("schema reference %s is not one of the files in schemas/" % uri)


def _resolver(schema):
    store = {BASE_URI + name: s for name, s in load_all().items()}
    return jsonschema.RefResolver(base_uri=schema.get("$id", BASE_URI), referrer=schema,
                                  store=store,
                                  handlers={"http": _refuse_remote, "https": _refuse_remote})


def _where(error):
    path = "".join("[%r]" % p if isinstance(p, int) else "." + str(p)
                   for p in error.absolute_path)
    return "$" + path


def errors(schema_name, instance):
    """Every mismatch of INSTANCE against SCHEMA_NAME, as one-line strings."""
    schema = load_all()[schema_name]
    validator = Validator(schema, resolver=_resolver(schema))
    found = sorted(validator.iter_errors(instance), key=lambda e: list(e.absolute_path))
    out = []
    for e in found:
        # For oneOf/anyOf the most specific cause is the useful one.
        best = jsonschema.exceptions.best_match([e])
        out.append("%s: %s" % (_where(best), best.message))
    return out


def validate(schema_name, instance):
    """Raises SchemaError naming the schema, the JSON path and the reason when
    INSTANCE does not match schemas/SCHEMA_NAME."""
    problems = errors(schema_name, instance)
    if problems:
        text = json.dumps(instance)
        if len(text) > 400:
            text = text[:400] + "..."
        raise SchemaError("%s does not match schemas/%s:\n  %s\ninstance: %s"
                          % ("body", schema_name, "\n  ".join(problems), text))


def check_schema(schema_name):
    """Raises when schemas/SCHEMA_NAME is not a valid draft 2020-12 schema or one
    of its $refs does not resolve."""
    schema = load_all()[schema_name]
    Validator.check_schema(schema)
    resolver = _resolver(schema)
    for ref in _refs(schema):
        resolver.resolve(ref)


def _refs(node):
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "$ref" and isinstance(v, str):
                yield v
            else:
                yield from _refs(v)
    elif isinstance(node, list):
        for v in node:
            yield from _refs(v)


def load_example(name):
    with open(os.path.join(EXAMPLES, name)) as f:
        return json.load(f)
