"""Published collective measurements, one YAML file per run (see FORMAT.md): shipped with trnsim as
the package ``trnsim.measurements`` so that ``trnsim validate`` finds them in every install mode."""
