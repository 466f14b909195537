"""Costing collectives: routed schedules, their time at every size, and bounds.

==============  ==================================================================================
``rows``        what every evaluator returns: a Row per size in nccl-tests' columns, an Evaluation
``backend``     one ``evaluate(op, sizes)`` for one group, groups at once or a cluster
``plan``        one algorithm's schedule routed on a group, costed at any size
``engine``      one group: every algorithm planned, costed and bounded at every size
``cost``        what a routed step or pipeline costs; the cost options (alpha, chunking)
``router``      a schedule's steps routed into link loads
``bounds``      lower bounds on a collective's time
``optimum``     the exact optimum the tightest bound needs
``concurrent``  several groups at once, sharing links
``cluster``     domains joined by the scale-out network, by composition
``borrowed``    links outside a group its traffic relays through
==============  ==================================================================================
"""
