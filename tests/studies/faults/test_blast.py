"""The chips a failure takes out of service, by policy (trnsim.studies.faults.blast)."""

import pytest

from studies.faults.common import GIB, by_kind, sweep


@pytest.mark.parametrize(("policy", "lost"), [("chip", 1), ("node", 4), ("rack", 72)])
def test_the_blast_radius_of_a_chip_on_a_switched_fabric(policy, lost):
    report = sweep("trn3-nl72x2-gen1", kinds=["chip"], policy=policy)
    assert by_kind(report)["chip"].lost_max == lost


def test_cuboid_is_a_torus_policy_and_a_cut_off_chip_takes_the_torus():
    from trnsim.errors import UsageError

    with pytest.raises(UsageError, match="for tori"):
        sweep("trn3-nl32x2-gen1", kinds=["chip"], policy="cuboid")
    # x0.y0 keeps one link; failing it cuts the chip off, and a torus job needs every chip
    base = ("fail=link:0,1", "fail=link:0,3", "fail=link:0,4")
    report = sweep("trn2-nl16", overrides=base, kinds=["link x"])
    cut = [o for o in report.classes[0].outcomes if "x0.y0" in o.component.spec.split(":")[1].split(",")]
    assert cut and all(len(o.lost) == 16 and o.busbw_gbps[("allreduce", GIB)] == 0 for o in cut)
