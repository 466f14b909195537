"""A system's structure as the ``topo`` commands report it: counts, hops, cuts, parameters, paths.

One definition of each figure, so every command prints the same chip, switch and link counts and
the same hop statistics (:class:`trnsim.topology.graph.Topology` owns the counts themselves).

Examples
--------
>>> from trnsim.topology import load_topology
>>> counts(load_topology("nl16"))["chips"]
16
"""

from trnsim.errors import UsageError


def counts(topology) -> dict:
    """Chips, ranks, ranks per chip, switches and links."""
    return {
        "chips": topology.n_chips,
        "ranks": topology.n_ranks,
        "ranks_per_chip": topology.ranks_per_chip,
        "switches": topology.n_switches,
        "links": topology.n_links,
    }


def hop_summary(stats) -> dict:
    """Diameter, average and histogram of a :class:`trnsim.routing.hops.HopStats`, in links and hops."""
    return {
        "diameter_links": stats.diameter_links,
        "diameter_hops": stats.diameter_hops,
        "avg_links": stats.avg_links,
        "avg_hops": stats.avg_hops,
        "hop_histogram": {str(k): v for k, v in stats.histogram_hops.items()},
    }


def endpoint_unit(topology) -> str:
    """What the endpoints are: ranks when chips host several, else chips."""
    return "rank" if topology.spec.chip.ranks > 1 else "chip"


def summary(topology) -> dict:
    """Name, counts, per-chip bandwidth (effective and raw), routing and hop statistics."""
    from trnsim.routing import hops
    from trnsim.routing.policy import routing_of
    from trnsim.topology import metrics

    bandwidth = metrics.device_bandwidth_gbps(topology)
    raw = metrics.device_bandwidth_gbps(topology, raw=True)
    stats = hops.hop_stats(topology)
    return {
        "name": topology.name,
        "aliases": list(topology.spec.aliases),
        "description": topology.spec.description,
        "kind": topology.spec.kind,
        "chip": topology.spec.chip.name,
        **counts(topology),
        "failed": list(topology.faults),
        "chip_bw_gbps": max(bandwidth.values()),
        "chip_bw_min_gbps": min(bandwidth.values()),
        "chip_raw_bw_gbps": max(raw.values()),
        "routing": routing_of(topology.spec).label,
        "routing_source": topology.spec.routing.source,
        # between ranks (the endpoints collectives run on); chip_hops: between physical chips
        "hops_between": endpoint_unit(topology) + "s",
        **hop_summary(stats),
        "chip_hops": hop_summary(hops.chip_hop_stats(topology) if topology.ranks_per_chip > 1 else stats),
        "source": str(topology.path.name if topology.path else ""),
    }


def structure(topology) -> dict:
    """Everything ``topo show`` reports: :func:`summary` plus trays, link classes, switch roles,
    natural cuts (with the smallest one-node cut), model parameters, assumptions and scale-out."""
    from trnsim.topology import metrics
    from trnsim.topology.trays import trays

    cuts = metrics.natural_cuts(topology)
    node_cuts = [
        c["bw_gbps"] for c in metrics.natural_cuts(topology, per_node=True) if c["cut"].startswith("node-")
    ]
    if node_cuts:
        label = topology.spec.switched.node_label
        cuts.append({"cut": f"one {label} vs the rest (smallest)", "bw_gbps": min(node_cuts)})
    scale_out = topology.spec.scale_out
    return {
        **summary(topology),
        "trays": trays(topology.spec),
        "link_classes": metrics.link_classes(topology),
        "switch_roles": metrics.switch_roles(topology),
        "cuts": cuts,
        "parameters": metrics.model_parameters(topology),
        "assumptions": metrics.assumed_sections(topology),
        "scale_out": None
        if scale_out is None
        else {
            "network": scale_out.network,
            "nic_gbit_per_chip": scale_out.nic_gbit,
            "nic_bw_gbps": scale_out.nic_gbit / 8,
            "nic_latency_ns": scale_out.nic_latency,
        },
    }


def distances_from(topology, origin: str) -> list[dict]:
    """Links and hops (devices passed through) from rank ``origin`` to every rank."""
    from trnsim.routing import hops

    links = hops.link_distances(topology, [origin])[0]
    return [
        {"rank": r, "chip": name, "links": int(links[r]), "hops": max(int(links[r]) - 1, 0)}
        for r, name in enumerate(topology.chips)
    ]


def path_between(topology, a: str, b: str) -> dict:
    """One shortest path from rank ``a`` to rank ``b`` (the one the routing policy takes, under a
    single-path policy), its links with their class, medium, lanes and bandwidth, and how many
    shortest paths there are.

    Raises
    ------
    UsageError
        When ``b`` cannot be reached with only switches forwarding (routing without relay).
    """
    from trnsim.routing.hops import policy_path, shortest_path

    nodes, paths = shortest_path(topology, a, b)
    if not paths:
        raise UsageError(
            f"{topology.where}: {a} cannot reach {b} when only switches forward traffic (routing without relay)"
        )
    policy = topology.spec.routing.policy
    if policy != "ecmp":
        nodes = policy_path(topology, a, b)
    graph = topology.graph
    steps = [
        {
            "from": u,
            "to": v,
            "cls": graph.edges[u, v]["cls"],
            "medium": graph.edges[u, v]["medium"],
            "lanes": graph.edges[u, v]["lanes"],
            "bw_gbps": graph.edges[u, v]["bw_gbps"],
            "to_kind": graph.nodes[v]["kind"],
        }
        for u, v in zip(nodes, nodes[1:], strict=False)
    ]
    links = len(nodes) - 1
    return {
        "name": topology.name,
        "src": a,
        "dst": b,
        "src_rank": topology.rank_of[a],
        "dst_rank": topology.rank_of[b],
        "links": links,
        "hops": max(links - 1, 0),
        "paths": paths,
        "routing": policy,
        "path": nodes,
        "steps": steps,
    }
