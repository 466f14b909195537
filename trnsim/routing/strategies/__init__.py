"""The ways of computing a demand's link loads, one module each, chosen by :mod:`trnsim.routing.loads`."""
