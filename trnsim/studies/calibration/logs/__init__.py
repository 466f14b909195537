"""The parts of :mod:`~trnsim.studies.calibration.readers`, one job each.

A file is parsed (text or JSON) into raw rows as printed and the claims it makes about its op and
rank count; those are then checked against each other and against the caller's arguments, and the
printed units decided, before :func:`~trnsim.studies.calibration.readers.parse_measurement` builds
the typed rows.

* :mod:`.parsed`: what a parser hands back (:class:`~.parsed.Raw`, :class:`~.parsed.Claim`,
  :class:`~.parsed.Parsed`) and the helpers every parser shares (messages, the row limit);
* :mod:`.numbers`: sizes, times and bandwidths as printed or as JSON values, with their limits and
  the rounding of their printed digits;
* :mod:`.claims`: the op and rank count a file states: the ops' names, rank counts, trnsim's own
  ``# trnsim:`` comment and ``"trnsim"`` object;
* :mod:`.nccl`, :mod:`.nccom`: each tool's dialect: its header columns, the lines that name the op
  or ranks, its JSON entries;
* :mod:`.text`, :mod:`.json_reader`: the two file formats;
* :mod:`.agree`: the one op and rank count the claims and the caller agree on (or the message that
  they do not, or are not stated);
* :mod:`.bandwidth`: the units the bandwidth columns were printed in, and the busbw check.
"""
