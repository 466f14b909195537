"""Graph export: DOT quotes names the way Graphviz reads them."""

import re
from pathlib import Path

from trnsim.outputs.topology_export import to_text
from trnsim.topology import load_topology

CATALOG = Path(__file__).resolve().parents[2] / "topologies"
NAME = 'a "quoted" \\ name'
# a DOT quoted string: backslash escapes inside double quotes
QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"')


def _unquote(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


def test_dot_escapes_quotes_and_backslashes(tmp_path):
    source = (CATALOG / "trn2-nl16.yaml").read_text()
    path = tmp_path / "quoted.yaml"
    path.write_text(re.sub(r"^name: .*$", "name: 'a \"quoted\" \\ name'", source, count=1, flags=re.M))
    topology = load_topology(topology=path)
    assert topology.name == NAME
    dot = to_text(topology, "dot")
    lines = dot.splitlines()
    assert lines[0] == 'graph "a \\"quoted\\" \\\\ name" {' and lines[-1] == "}"
    for line in lines:
        # once every quoted string is taken out, no quote or backslash is left over
        assert '"' not in QUOTED.sub("", line), line
    assert _unquote(QUOTED.match(lines[0], 6)[1]) == NAME
    nodes = {_unquote(m[1]) for line in lines[2:-1] if "--" not in line for m in [QUOTED.search(line)]}
    assert nodes == set(topology.graph.nodes)


def test_dot_escapes_node_names():
    from trnsim.outputs.topology_export import _dot_id

    assert _dot_id('r0"x\\') == '"r0\\"x\\\\"'
    assert _dot_id("r0.n0.A") == '"r0.n0.A"'
