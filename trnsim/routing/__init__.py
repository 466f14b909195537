"""Routing: shortest paths, symmetry, and the policies that put each flow's bytes on links."""
