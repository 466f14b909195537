"""Design-space search: what-if edits varied over a grid (or sampled from it) across systems, each
point judged by an objective per dollar and per watt, under constraints, with its Pareto front.

* :mod:`~trnsim.studies.design.grid`: the axes, the grid of points and how points are chosen;
* :mod:`~trnsim.studies.design.objectives`: the performance figures (busbw, an MoE all-to-all, a
  layout's step time);
* :mod:`~trnsim.studies.design.faults`: the expected busbw under the fault model;
* :mod:`~trnsim.studies.design.constraints`: ``KEY OP NUMBER`` limits on a row's numbers;
* :mod:`~trnsim.studies.design.pareto`: the front;
* :mod:`~trnsim.studies.design.run`: a point evaluated (its system built, costed and measured), and
  the constraints and front over all of them.
"""
