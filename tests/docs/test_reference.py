"""The topology-file reference documents the whole schema, and its example is a valid file.

The reference is generated at build time by docs/hooks/reference.py from the msgspec structs of
trnsim/spec/schema.py; what each key means is written in docs/hooks/fields.yaml. A field added to the
schema without a meaning there fails here (and stops the site's build).
"""

import importlib.util
import re
import sys

import msgspec
import pytest

from tests.docs.pages import DOCS


def _hook():
    spec = importlib.util.spec_from_file_location("docs_reference_hook", DOCS / "hooks" / "reference.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


HOOK = _hook()


def _schema_structs() -> dict[type, list[str]]:
    """Every struct a topology file is read into, found by walking the schema's types (not the
    generator's own walk), with its fields."""
    from trnsim.spec.schema import Spec

    found: dict[type, list[str]] = {}
    todo = [msgspec.inspect.type_info(Spec)]
    while todo:
        info = todo.pop()
        if isinstance(info, msgspec.inspect.StructType) and info.cls not in found:
            found[info.cls] = [field.name for field in info.fields]
            todo += [field.type for field in info.fields]
        for attr in ("types", "item_type", "value_type"):
            value = getattr(info, attr, None)
            todo += list(value) if isinstance(value, tuple) else [value] if value is not None else []
    return found


STRUCTS = _schema_structs()


def test_the_walk_finds_the_schema_s_structs():
    from trnsim.spec import schema

    declared = {
        value
        for value in vars(schema).values()
        if isinstance(value, type) and issubclass(value, schema.Section) and value is not schema.Section
    }
    assert set(STRUCTS) == declared  # every struct the module declares is reachable from Spec


@pytest.mark.parametrize("cls", list(STRUCTS), ids=lambda cls: cls.__name__)
def test_every_field_is_in_the_reference_with_a_meaning(cls):
    sections = {section.struct: section for section in HOOK.schema_sections()}
    section = sections[cls.__name__]
    assert [row.key for row in section.rows] == STRUCTS[cls]
    for row in section.rows:
        assert row.type and row.default and len(row.text) > 10, (cls.__name__, row.key)
    text = HOOK.schema_reference()
    table = text[text.index(f"{{#section-{cls.__name__.lower()}}}") :].split("\n\n###")[0]
    for name in STRUCTS[cls]:
        assert f"| `{name}` |" in table, (cls.__name__, name)


def test_a_field_without_a_meaning_stops_the_build(monkeypatch, tmp_path):
    fields = (DOCS / "hooks" / "fields.yaml").read_text(encoding="utf-8")
    edited = tmp_path / "fields.yaml"
    edited.write_text(re.sub(r"\n  hop_ns: [^\n]*(\n    [^\n]*)*", "", fields, count=1), encoding="utf-8")
    monkeypatch.setattr(HOOK, "FIELDS", edited)
    with pytest.raises(ValueError, match=r"ScaleOut\.hop_ns \(undocumented\)"):
        HOOK.schema_sections()


def test_defaults_and_constraints_are_the_schema_s():
    rows = {(s.struct, row.key): row for s in HOOK.schema_sections() for row in s.rows}
    assert rows[("Latency", "step_ns")].default == "required"
    assert rows[("Latency", "step_ns")].unit == "ns"
    assert rows[("ScaleOut", "hop_ns")].default == "`15,000`"
    assert rows[("RoutingSpec", "hash_seeds")].constraints == "1 to 64"
    assert rows[("Chip", "lane_gbps")].constraints == "0.001 to 10,000"
    assert rows[("Chip", "lanes")].constraints == "> 0; <= 2^40"
    assert rows[("Spec", "name")].constraints == "1 to 200 characters, one printable line"
    assert rows[("Axis", "medium")].type.startswith("one of `aec`, `backplane`")


def test_the_minimal_example_is_a_valid_file(tmp_path):
    from trnsim.topology import load_topology

    page = (DOCS / "reference" / "topology-files.md").read_text(encoding="utf-8")
    example = re.search(r"## A minimal file.*?```yaml\n(.*?)```", page, re.S)[1]
    path = tmp_path / "my-torus.yaml"
    path.write_text(example, encoding="utf-8")
    topology = load_topology(topology=path)
    assert (topology.spec.name, len(topology.chips)) == ("my-torus", 8)
    assert topology.spec.efficiency.default == 0.88


def test_the_architecture_page_names_every_layer_and_package():
    """A package added under trnsim/ is documented where the layers are; the generated module list
    walks the layers tests/test_layers.py enforces."""
    from pathlib import Path

    import trnsim
    from tests.test_layers import LAYERS

    assert HOOK.LAYERS == LAYERS
    package = Path(trnsim.__file__).parent
    page = (DOCS / "architecture.md").read_text(encoding="utf-8")
    folders = {p.parent for p in package.rglob("__init__.py")} - {package}
    missing = []
    for folder in sorted(folders):
        parts = folder.relative_to(package).parts
        named = f"trnsim/{parts[0]}" if len(parts) == 1 else f"`{parts[-1]}/`"
        if parts[0] != "topologies" and named not in page:
            missing.append("/".join(parts))
    assert not missing, f"docs/architecture.md does not name {missing}"
    listing = HOOK.module_list()
    assert all(f"`{p.relative_to(package.parent)}`" in listing for p in package.rglob("*.py"))
