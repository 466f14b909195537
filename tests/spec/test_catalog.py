"""Every catalog file loads, builds, carries sources, and every broken copy is refused cleanly."""

import copy
import re

import pytest
import yaml
from conftest import CATALOG

from trnsim.errors import ConfigError, FileAsSkuError, UsageError
from trnsim.spec.catalog import find_sku, load_spec, read_document, validate_document

CONTRACT = {
    "trn1-nl16": {"trn1", "trn1.32xlarge", "nl16-trn1"},
    "trn2-nl16": {"nl16", "trn2"},
    "trn2-nl64": {"nl64", "trn2-ultra", "trn2-nl32x2"},
    "trn2-nl256-concept": {"trn2-ultra-max-plus"},
    "trn3-nl32x2-gen1": {"nl32x2", "trn3-nl32x2"},
    "trn3-nl32x2-gen2": set(),
    "trn3-nl32x2-gen3": set(),
    "trn3-nl72x2-gen1": {"nl72x2", "trn3-nl72x2"},
    "trn3-nl72x2-gen2": set(),
    "trn3-nl72x2-gen3": set(),
    "trn3-nl72x2-pex90144": set(),
    "trn3-ultraserver-gen1": set(),
    "trn3-ultraserver-gen2": set(),
    # peers (issue 13)
    "gb200-nvl72": {"nvl72"},
    "hgx-h100": {"h100"},
    "hgx-b200": {"b200"},
    "ualink-72": {"ualink"},
    "tpu-v5e-16x16": {"v5e"},
    "tpu-v6e-16x16": {"v6e"},
    "tpu-v4-4x4x8": {"v4"},
    "tpu-v4-4x8x8": set(),
    "tpu-v5p-4x4x8": {"v5p"},
    "tpu7x-4x4x4": {"ironwood", "tpu7x"},
}


def test_catalog_holds_the_contracted_names_and_aliases():
    names = {read_document(path)["name"]: set(read_document(path).get("aliases", [])) for path in CATALOG}
    assert names == CONTRACT
    for name, aliases in CONTRACT.items():
        for alias in {name, *aliases}:
            assert read_document(find_sku(alias))["name"] == name


def test_names_and_aliases_are_unique():
    seen = []
    for path in CATALOG:
        document = read_document(path)
        seen += [document["name"], *document.get("aliases", [])]
    assert len(seen) == len(set(seen))


def _sections(node, keypath=""):
    """Every mapping in a document that holds numbers, with its key path."""
    if isinstance(node, dict):
        if any(isinstance(v, (int, float)) and not isinstance(v, bool) for v in node.values()):
            yield keypath, node
        for key, value in node.items():
            yield from _sections(value, f"{keypath}.{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _sections(value, f"{keypath}[{i}]")


@pytest.mark.parametrize("path", CATALOG, ids=lambda p: p.stem)
def test_every_number_in_the_catalog_has_a_source(path):
    document = read_document(path)
    assert document.get("source")
    for keypath, section in _sections(document):
        # per-class efficiencies and an axis's twist are cited by the section that holds them
        parent_has_source = (
            "source" in section or keypath == ".efficiency.classes" or keypath.endswith("].twist")
        )
        # planes and slot lists carry no numbers of their own; everything else cites a source
        assert parent_has_source, f"{path.name}: {keypath} has numbers but no source"


@pytest.mark.parametrize("path", CATALOG, ids=lambda p: p.stem)
def test_latency_figures_say_they_are_assumptions(path):
    assert "assumption" in read_document(path)["latency"]["source"]


@pytest.mark.parametrize("path", CATALOG, ids=lambda p: p.stem)
def test_routing_and_efficiency_defaults_are_named_and_say_what_is_assumed(path):
    document = read_document(path)
    assert document["routing"]["policy"] in ("ecmp", "single", "hash")
    assert "assumption" in document["routing"]["source"]
    assert 0 < document["efficiency"]["default"] < 1
    assert "assumption" in document["efficiency"]["source"]


def test_unknown_sku_suggests_close_names():
    with pytest.raises(UsageError, match="did you mean.*nl72x2"):
        find_sku("nl72x3")
    with pytest.raises(UsageError, match="trn3-nl32x2"):
        find_sku("trn3-nl32")


@pytest.mark.parametrize("exists", [True, False])
@pytest.mark.parametrize("suffix", [".yaml", ".YML", ".txt"])
def test_a_file_path_as_a_sku_says_it_is_a_file(tmp_path, monkeypatch, exists, suffix):
    monkeypatch.chdir(tmp_path)
    name = f"mine{suffix}"
    if exists:
        (tmp_path / name).write_text("name: mine\n")
    for spelled in (name, f"./{name}", str(tmp_path / name)):
        if not exists and suffix == ".txt":  # neither a file nor a YAML name: an unknown SKU
            with pytest.raises(UsageError, match="unknown SKU") as caught:
                find_sku(spelled)
            assert not isinstance(caught.value, FileAsSkuError)
            continue
        with pytest.raises(FileAsSkuError) as caught:
            find_sku(spelled)
        message = str(caught.value)
        assert message.startswith(f"{spelled!r} is a file path, not a SKU name")
        assert ("no such file" in message) != exists
        assert "--" not in message  # the library names no option: the CLI adds it


def test_names_that_cannot_be_paths_are_unknown_skus():
    for name in ("x" * 5000, "a\x00b"):
        with pytest.raises(UsageError, match="unknown SKU"):
            find_sku(name)


def _breakages(document: dict):
    """(description, broken document, expected key path) for one catalog document."""
    kind = document["kind"]
    broken = copy.deepcopy(document)
    del broken["chip"]
    yield "missing key", broken, "chip"
    broken = copy.deepcopy(document)
    broken["latency"]["bogus_ns"] = 3
    yield "unknown key", broken, "latency"
    broken = copy.deepcopy(document)
    broken["chip"]["lanes"] = "many"
    yield "wrong type", broken, "chip.lanes"
    broken = copy.deepcopy(document)
    broken["chip"]["lane_gbps"] = 0
    yield "non-positive bandwidth", broken, "chip.lane_gbps"
    broken = copy.deepcopy(document)
    if kind == "torus":
        broken["torus"]["axes"][0]["lanes"] = -16
        yield "negative lanes", broken, "torus.axes[0].lanes"
    elif "cross_rack" in broken["switched"]:
        broken["switched"]["cross_rack"]["lanes"] = 0
        yield "zero lanes", broken, "switched.cross_rack.lanes"
    else:  # one rack: no cables between racks
        broken["switched"]["switch_fabric"]["lanes_per_link"] = 0
        yield "zero lanes", broken, "switched.switch_fabric.lanes_per_link"


@pytest.mark.parametrize("path", CATALOG, ids=lambda p: p.stem)
def test_broken_copies_are_refused_naming_file_and_key(path, tmp_path):
    document = read_document(path)
    for what, broken, keypath in _breakages(document):
        with pytest.raises(ConfigError) as caught:
            validate_document(broken, tmp_path / path.name)
        message = str(caught.value)
        assert path.name in message and keypath in message, (what, message)
        assert "\n" not in message


def test_invalid_yaml_names_the_file_and_line(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nchip: [unclosed\n")
    with pytest.raises(ConfigError, match=r"bad\.yaml: not valid YAML \(line"):
        read_document(bad)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "the file is empty"),
        (b"name: a\nname: b\n", "key 'name' appears twice"),
        (b"\xff\xfe\x00bad", "not a text file"),
    ],
)
def test_unreadable_files_are_refused_in_one_line(tmp_path, content, message):
    path = tmp_path / "t.yaml"
    path.write_bytes(content)
    with pytest.raises(ConfigError, match=message):
        read_document(path)


def test_enum_errors_list_the_choices(tmp_path):
    document = read_document(find_sku("nl16"))
    document["kind"] = "mesh"
    with pytest.raises(ConfigError, match="kind: .*expected one of torus, switched"):
        validate_document(document, tmp_path / "x.yaml")


def test_yaml_is_read_with_a_safe_loader(tmp_path):
    evil = tmp_path / "evil.yaml"
    evil.write_text("name: !!python/object/apply:os.system ['echo pwned']\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        read_document(evil)


def test_kind_needs_its_section(tmp_path):
    document = read_document(find_sku("nl16"))
    document["switched"] = {"racks": 1, "nodes_per_rack": 1, "slots": ["A"]}
    with pytest.raises(ConfigError, match="a torus file takes no `switched` section"):
        validate_document(document, tmp_path / "x.yaml")
    document = read_document(find_sku("nl16"))
    del document["torus"]
    with pytest.raises(ConfigError, match="missing required key `torus`"):
        validate_document(document, tmp_path / "x.yaml")


def test_overrides_change_the_spec_and_refuse_unknown_keys():
    loaded = load_spec("nl72x2", overrides=["latency.switch_ns=50", "switched.cross_rack.lanes=8"])
    assert loaded.spec.latency.switch_ns == 50
    assert loaded.spec.switched.cross_rack.lanes == 8
    loaded = load_spec("nl64", overrides=["torus.axes.z.lanes=32"])
    assert loaded.spec.torus.axes[0].lanes == 32
    # a misspelt last key is refused by the schema, and the message blames the edits, not the file
    with pytest.raises(
        ConfigError, match=r"with overrides latency.swich_ns=50: latency: unknown key `swich_ns`"
    ):
        load_spec("nl72x2", overrides=["latency.swich_ns=50"])
    with pytest.raises(UsageError, match="no section 'latncy'"):
        load_spec("nl72x2", overrides=["latncy.switch_ns=50"])
    # optional fields a file leaves out can be set; numbers in scientific notation are numbers
    assert load_spec("nl16", overrides=["torus.axes.x.wrap=false"]).spec.torus.axes[0].wrap is False
    assert load_spec("nl16", overrides=["latency.step_ns=1e3"]).spec.latency.step_ns == 1000.0
    with pytest.raises(UsageError, match="KEY=VALUE"):
        load_spec("nl72x2", overrides=["latency.switch_ns"])


def test_user_topology_file_loads(tmp_path):
    document = read_document(find_sku("nl16"))
    document["name"] = "my-torus"
    document["torus"]["axes"][0]["size"] = 8
    del document["torus"]["hypercube_plane"]
    path = tmp_path / "mine.yaml"
    path.write_text(yaml.safe_dump(document))
    assert load_spec(topology=path).spec.name == "my-torus"


def test_optional_sections_take_edits_on_files_without_them(tmp_path):
    from trnsim.topology.load import load_topology

    document = read_document(find_sku("trn2-nl16"))
    del document["routing"], document["efficiency"]
    import yaml

    path = tmp_path / "bare.yaml"
    path.write_text(yaml.safe_dump(document))
    topo = load_topology(topology=path, overrides=["routing.policy=single", "efficiency.classes.x=0.5"])
    assert topo.spec.routing.policy == "single" and topo.spec.efficiency.of("x") == 0.5
    assert topo.spec.efficiency.of("y") == 1.0  # a file that names no efficiency runs at raw rates
    with pytest.raises(ConfigError, match="efficiency.classes.z: no link of class 'z'"):
        load_topology(topology=path, overrides=["efficiency.classes.z=0.5"])


def test_an_alias_bomb_on_the_aliases_line_is_refused_by_the_yaml_bounds(tmp_path, monkeypatch):
    """``_names_of`` loaded the raw ``aliases:`` line with no bounds: ten million names to str()."""
    from trnsim.spec import catalog

    levels = ["&a0 [" + ", ".join(["x"] * 10) + "]"]
    levels += [f"&a{k} [" + ", ".join([f"*a{k - 1}"] * 10) + "]" for k in range(1, 7)]
    text = (CATALOG[0].parent / "trn2-nl16.yaml").read_text()
    assert "\naliases: [nl16, trn2]\n" in text
    bomb = text.replace("\naliases: [nl16, trn2]\n", f"\naliases: [nl16, trn2, {', '.join(levels)}]\n")
    (tmp_path / "trn2-nl16.yaml").write_text(bomb)
    line = 1 + bomb[: bomb.index("\naliases:") + 1].count("\n")
    monkeypatch.setenv("TRNSIM_CATALOG", str(tmp_path))
    catalog._catalog_index.cache_clear()
    try:
        with pytest.raises(UsageError, match=rf"trn2-nl16.yaml: line {line}: .*TRNSIM_MAX_YAML_NODES"):
            find_sku("nl16")
    finally:
        catalog._catalog_index.cache_clear()


@pytest.mark.parametrize(
    ("keypath", "text"),
    [
        ("description", "clears the screen \x1b[2J"),
        ("description", "csi \x9b2J"),
        ("source", "bell \x07"),
        ("chip.source", "two\nlines"),
        ("torus.axes[0].source", "rtl \u202e"),
    ],
)
def test_descriptions_and_sources_are_printable_text(keypath, text):
    """topo show printed a description's escape codes raw (it cleared the screen)."""
    document = copy.deepcopy(read_document(CATALOG[0].parent / "trn2-nl16.yaml"))
    node, *path = keypath.replace("[0]", ".0").split(".")
    target = document
    for key in [node, *path][:-1]:
        target = target[int(key)] if key.isdigit() else target[key]
    last = [node, *path][-1]
    target[last] = text
    with pytest.raises(
        ConfigError, match=rf"x.yaml: {re.escape(keypath)}: expected one line of printable text"
    ):
        validate_document(document, "x.yaml")


def test_a_description_with_an_escape_code_is_refused_by_topo_show(cli, tmp_path):
    document = read_document(CATALOG[0].parent / "trn2-nl16.yaml")
    document["description"] = "\x1b[2J\x1b[Hgone"
    path = tmp_path / "escape.yaml"
    path.write_text(yaml.safe_dump(document))
    result = cli("topo", "show", "--topology", str(path))
    assert result.code == 2 and "\x1b" not in result.out + result.err
    assert "description: expected one line of printable text" in result.err


def _scale_out_document(**scale_out) -> dict:
    document = read_document(find_sku("trn2-nl16"))
    document["scale_out"] = scale_out
    return document


def test_scale_out_reads_the_nic_rate_under_its_new_or_its_old_name():
    new = validate_document(_scale_out_document(nic_gbit_per_chip=400, nic_latency_ns=500), "x.yaml")
    old = validate_document(_scale_out_document(efa_gbit_per_chip=400, efa_latency_ns=500), "x.yaml")
    assert new.scale_out.nic_gbit == old.scale_out.nic_gbit == 400
    assert new.scale_out.nic_latency == old.scale_out.nic_latency == 500


@pytest.mark.parametrize(
    ("scale_out", "words"),
    [
        ({"nic_gbit_per_chip": 400, "efa_gbit_per_chip": 400}, "scale_out.efa_gbit_per_chip: the older name"),
        ({"nic_gbit_per_chip": 4, "nic_latency_ns": 1, "efa_latency_ns": 1}, "scale_out.efa_latency_ns"),
        ({"network": "efa"}, "scale_out.nic_gbit_per_chip: missing required key"),
        ({"network": "ethernet", "nic_gbit_per_chip": 4}, "expected one of efa, infiniband, roce, dcn"),
    ],
)
def test_a_scale_out_section_is_refused_in_one_line_naming_its_key(scale_out, words):
    with pytest.raises(ConfigError, match=re.escape(words)) as refused:
        validate_document(_scale_out_document(**scale_out), "x.yaml")
    assert "\n" not in str(refused.value) and str(refused.value).startswith("x.yaml: ")


@pytest.mark.parametrize(
    ("network", "policy", "port_gbit", "tors"),
    [
        ("efa", "spray", 100.0, 2),
        ("infiniband", "spray", 400.0, 1),
        ("roce", "hash", 400.0, 1),
        ("dcn", "hash", 100.0, 1),
    ],
)
def test_the_network_gives_the_defaults_a_file_leaves_out(network, policy, port_gbit, tors):
    spec = validate_document(_scale_out_document(network=network, nic_gbit_per_chip=400), "x.yaml")
    assert spec.scale_out.default("policy") == policy
    assert spec.scale_out.default("port_gbit") == port_gbit
    assert spec.scale_out.default("tors_per_rack") == tors
    # what the file says wins over the network's default
    given = validate_document(
        _scale_out_document(network=network, nic_gbit_per_chip=400, policy="spray", tors_per_rack=4), "x.yaml"
    )
    assert given.scale_out.default("policy") == "spray" and given.scale_out.default("tors_per_rack") == 4


def test_every_peer_has_a_scale_out_network():
    for path in CATALOG:
        spec = load_spec(topology=path).spec
        assert spec.scale_out is not None and spec.scale_out.nic_gbit > 0, path.name
