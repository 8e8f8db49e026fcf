"""Telemetry straight from an agent harness: hook events in, episodes, uses, outcomes and failures out.

:mod:`.events` turns a harness's hook event into a :class:`~.events.HarnessEvent`, :mod:`.apply`
writes one into the library exactly once, :mod:`.spool` keeps the events a busy or unreachable
library could not take, and :mod:`.run` is the ``kaos hook`` call that ties them together.
"""
