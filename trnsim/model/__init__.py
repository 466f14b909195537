"""Costing collectives: routed schedules, their time at every size, and bounds."""
