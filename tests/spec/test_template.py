"""The shipped topology templates: valid as shipped, named as asked, costed like any file."""

import networkx as nx
import pytest
import yaml

from trnsim.errors import UsageError
from trnsim.spec.template import KINDS, template_text
from trnsim.topology import load_topology


@pytest.mark.parametrize("kind", KINDS)
def test_a_template_builds_the_system_its_comments_describe(kind, tmp_path):
    path = tmp_path / f"{kind}.yaml"
    path.write_text(template_text(kind, "first"))
    document = yaml.safe_load(path.read_text())
    topology = load_topology(topology=path)
    assert topology.name == "first" and topology.spec.kind == kind
    # the counts follow from the file's own figures, not from a remembered answer
    if kind == "torus":
        sizes = [axis["size"] for axis in document["torus"]["axes"]]
        assert topology.n_chips == sizes[0] * sizes[1]
        expected = nx.grid_2d_graph(*sizes, periodic=True)
        assert topology.n_links == expected.number_of_edges()
    else:
        switched = document["switched"]
        fabric = switched["switch_fabric"]
        assert topology.n_chips == switched["racks"] * switched["nodes_per_rack"] * len(switched["slots"])
        assert topology.n_switches == fabric["switches_per_plane"] * len(fabric["planes"])
        assert topology.n_links == topology.n_chips * fabric["switches_per_plane"]
    assert topology.notes == ()  # it sets efficiency: no raw-rate note


@pytest.mark.parametrize("name", ["my rack", "a: b # c", "'quoted'", "ünïcode"])
def test_any_printable_name_is_written_as_given(name):
    assert yaml.safe_load(template_text("torus", name))["name"] == name


@pytest.mark.parametrize(("kind", "name"), [("mesh", "x"), ("torus", ""), ("torus", "two\nlines")])
def test_an_unknown_kind_or_a_bad_name_is_one_line(kind, name):
    with pytest.raises(UsageError) as error:
        template_text(kind, name)
    assert "\n" not in str(error.value).replace(repr(name), "")
