"""Export a topology graph as GraphML, networkx node-link JSON or Graphviz DOT."""

import io
import json

import networkx as nx

from trnsim.topology.graph import Topology


def _plain_graph(topology: Topology) -> nx.Graph:
    """A copy whose attributes are all strings, numbers or booleans (GraphML has no tuples or None)."""
    plain = nx.Graph(name=topology.name)
    for node, data in topology.graph.nodes(data=True):
        plain.add_node(
            node,
            **{
                k: (",".join(map(str, v)) if isinstance(v, tuple) else v)
                for k, v in data.items()
                if v is not None
            },
        )
    for u, v, data in topology.graph.edges(data=True):
        plain.add_edge(u, v, **data)
    return plain


def _dot_id(text: str) -> str:
    """``text`` as a double-quoted Graphviz ID: backslashes and quotes escaped, so any name is safe."""
    return '"' + _dot_escape(text) + '"'


def _dot_escape(text: str) -> str:
    # backslash first, or the quote escapes would be doubled; in a label "\\" also prints one "\"
    return str(text).replace("\\", "\\\\").replace('"', '\\"')


def to_text(topology: Topology, fmt: str) -> str:
    """Serialise the graph: ``graphml``, ``json`` (node-link data), ``dot`` or ``astra-sim``."""
    if fmt == "astra-sim":
        from trnsim.outputs.astra import to_astra_sim

        return to_astra_sim(topology)
    if fmt == "graphml":
        buffer = io.BytesIO()
        nx.write_graphml(_plain_graph(topology), buffer)
        return buffer.getvalue().decode()
    if fmt == "json":
        data = nx.node_link_data(topology.graph, edges="links")
        return json.dumps(data, indent=1, default=list)
    lines = [f"graph {_dot_id(topology.name)} {{", "  node [fontsize=9];"]
    for node, data in topology.graph.nodes(data=True):
        shape = "box" if data["kind"] == "switch" else "ellipse"
        # "\\n" is Graphviz's line break in a label, added after the name is escaped
        label = _dot_escape(node) + (f"\\nrank {data['rank']}" if data["kind"] == "chip" else "")
        lines.append(f'  {_dot_id(node)} [shape={shape}, label="{label}"];')
    for u, v, data in topology.graph.edges(data=True):
        label = _dot_id(f"{data['cls']} {data['bw_gbps']:g} GB/s")
        lines.append(f"  {_dot_id(u)} -- {_dot_id(v)} [label={label}];")
    lines.append("}")
    return "\n".join(lines) + "\n"
