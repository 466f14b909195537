"""How ``trnsim faults`` shows a study: per-class losses, random draws, rates and systems side by side."""

import typer

from trnsim.outputs.render import Column, Scaled, Table


def percent(value: float) -> str:
    return f"{100 * value:.1f}"


def system_tables(label: str, healthy, study, options, basis) -> list[Table]:
    """One system's tables: the loss per class of parts, the random draws (when asked for), the
    failure rates."""
    tables = [class_table(label, healthy, study)]
    if study.draws is not None:
        tables.append(draws_table(label, study, options))
    tables.append(rates_table(label, study, options, basis))
    return tables


def class_table(label: str, healthy, study) -> Table:
    report = study.report
    unit = "ranks" if healthy.spec.chip.ranks > 1 else "chips"  # a chip's ranks are lost with it
    against = (
        "against the healthy system"
        if not healthy.faults
        else f"against the system with {', '.join(healthy.faults)} already failed"
    )
    return Table(
        f"{label}: every single failure ({sum(c.count for c in report.classes)} parts, "
        f"{report.evaluated} distinct evaluated); blast radius {report.policy}; loss of busbw "
        + against
        + ("" if study.runtime == "ideal" else f"; runtime {study.runtime}"),
        [
            Column("kind", "part", align="left"),
            Column("parts", "parts"),
            Column("distinct", "distinct"),
            Column("chips_lost_max", f"{unit} lost"),
            Column("op", "op", align="left"),
            Column("bytes", "size (B)", drop_priority=3),
            Column("busbw_before_gbps", "busbw before", "{:.1f}", drop_priority=2),
            Column("worst_loss", "worst %", percent),
            Column("median_loss", "median %", percent, drop_priority=4),
            Column("mean_loss", "mean %", percent),
            Column("worst_part", "worst part", align="left", drop_priority=1),
        ],
        study.classes,
        [
            f"# {unit} lost: by the worst part of the class under the blast-radius policy; a failure "
            f"that loses {unit} is measured on the survivors as one group; a negative loss is a run "
            "faster than before (the survivors' schedule or the routing's collisions changed)"
        ],
    )


def draws_table(label: str, study, options) -> Table:
    return Table(
        f"{label}: {options.random} parts failed at once, {options.samples} draws by failure rate "
        f"(seed {options.seed})",
        [
            Column("op", "op", align="left"),
            Column("bytes", "size (B)"),
            Column("samples", "draws"),
            Column("mean_loss", "mean %", percent),
            Column("median_loss", "median %", percent),
            Column("worst_loss", "worst %", percent),
            Column("chips_lost_mean", "chips lost (mean)", "{:.2f}"),
            Column("p_chips_lost", "P(chips lost)", Scaled(100, "{:.0f}%")),
            Column("worst_draw", "worst draw", align="left", drop_priority=1),
        ],
        study.draws,
    )


def rates_table(label: str, study, options, basis) -> Table:
    rel, per_chip = study.reliability, study.report.ranks_per_chip
    rate_basis, mttr_basis = basis
    mttr_text = f"MTTR {options.mttr_h:g} h" + (", an assumption" if mttr_basis == "assumption" else "")
    return Table(
        f"{label}: failure rates ({mttr_text})",
        [
            Column("kind", "part", align="left"),
            Column("rate_class", "rate class", align="left"),
            Column("parts", "parts"),
            Column("mttf_h", "MTTF (h)", "{:,.0f}"),
            Column("mttf_basis", "MTTF is", align="left"),
            Column("failures_per_year", "failures/yr", "{:.3f}"),
            Column("chips_out", "chips out (mean)", "{:.4f}"),
        ],
        [{**row, "mttf_basis": rate_basis[row["rate_class"]]} for row in study.rates_by_class],
        [
            f"# {rel.failures_per_year:.2f} failures a year; {rel.chips_out / per_chip:.3f} of "
            f"{study.report.chips} chips out of service on average: availability "
            f"{100 * rel.availability:.3f}% of the capacity"
            + (f" (counting only the parts swept: {', '.join(options.kinds)})" if options.kinds else ""),
            "# MTTF is: an assumption or cited as the failure-rate table in docs/guide/faults.md says "
            "(--mttf, --failure-rate and --mttr override)",
        ],
    )


def side_by_side(summary: list[dict], key: tuple[str, int], domains: int | None) -> Table:
    columns = [
        # at 80 columns: short headers, then the worst part, chips out, failures a year, blast radius
        # and chips leave (highest drop_priority first)
        Column("system", "system", align="left"),
        Column("chips", "chips", drop_priority=2),
        Column("policy", "blast radius", align="left", drop_priority=3),
        Column("failures_per_year", "failures/yr", "{:.2f}", short="fails/yr", drop_priority=4),
        Column("chips_out", "chips out", "{:.3f}", drop_priority=5),
        Column("availability", "availability %", Scaled(100, "{:.3f}"), short="avail %"),
        Column(
            "worst_loss",
            f"worst loss % losing no chip ({key[0]}, {key[1]} B)",
            percent,
            short="worst loss %",
        ),
        Column("worst_part", "worst part", align="left", drop_priority=6),
    ]
    footer = [f"# worst loss %: of busbw, by the worst single part that loses no chip ({key[0]}, {key[1]} B)"]
    if domains:
        columns += [
            Column(
                "p_some_down",
                f"P(a domain of {domains} needs a spare)",
                Scaled(100, "{:.2f}%"),
                short="P(spare)",
            ),
            Column("expected_slowdown", "expected slowdown", "{:.4f}x", short="slowdown"),
        ]
        footer.append(
            f"# a job over {domains} domains runs at its slowest: a failure that loses chips needs a spare "
            "domain (P(spare)); one that loses none slows its domain"
        )
    return Table("side by side", columns, summary, footer)


def system_payload(label: str, study, rate_basis: dict[str, str]) -> dict:
    """One system in ``--format json``."""
    report, rel = study.report, study.reliability
    return {
        "system": label,
        "chips": report.chips,
        "ranks": report.ranks,
        "policy": report.policy,
        "evaluated": report.evaluated,
        **({} if study.runtime == "ideal" else {"runtime": study.runtime}),
        "healthy_busbw_gbps": [
            {"op": k[0], "bytes": k[1], "busbw_gbps": v} for k, v in report.healthy.items()
        ],
        "classes": study.classes,
        "reliability": {
            "failures_per_year": rel.failures_per_year,
            "chips_out": rel.chips_out / report.ranks_per_chip,
            "availability": rel.availability,
            "p_degraded": rel.p_degraded,
            "p_down": rel.p_down,
            "by_class": [
                {**row, "mttf_basis": rate_basis[row["rate_class"]]} for row in study.rates_by_class
            ],
        },
        "straggler": study.straggler,
        "random": study.draws,
    }


def one_csv_table(per_class: Table, rows: list[dict], drawn: bool) -> Table:
    """CSV is one table of rows of one shape: every system's loss per class of parts.

    The failure rates, the side-by-side summary and the random draws have rows of other shapes;
    they are in ``--format json`` (``systems[].reliability``, ``side_by_side``, ``systems[].random``),
    as a note on stderr says.
    """
    others = (
        "the failure rates, the side-by-side summary and the random draws"
        if drawn
        else ("the failure rates and the side-by-side summary")
    )
    typer.echo(f"note: the CSV holds the loss per class of parts; {others} are in --format json", err=True)
    return Table(None, [Column("system", "system", align="left"), *per_class.columns], rows)
