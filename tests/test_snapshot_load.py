"""A snapshot loaded as the commands load it (cli/gcpause.load_quietly around load_snapshot): the
collector is off while records are built and back on afterwards."""

from __future__ import annotations

import gc

import pytest

import kubectl_tspread.snapshot as snapshot_mod
from kubectl_tspread.model.errors import InputError
from kubectl_tspread.cli.gcpause import load_quietly
from kubectl_tspread.cli.options import SourceOptions


def test_collector_is_off_while_loading_and_on_after(monkeypatch):
    seen = []
    real = snapshot_mod._load

    def spy(source, kinds, cluster_wide=False, page_helpers=None):
        seen.append(gc.isenabled())
        return real(source, kinds, cluster_wide, page_helpers)

    monkeypatch.setattr(snapshot_mod, "_load", spy)
    assert gc.isenabled()
    snap = load_quietly(snapshot_mod.load_snapshot, SourceOptions(demo=True))
    assert snap.nodes and seen == [False] and gc.isenabled()


def test_collector_comes_back_after_an_error(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(InputError):
        load_quietly(snapshot_mod.load_snapshot, SourceOptions(from_file=(str(bad),)))
    assert gc.isenabled()


def test_records_are_frozen_before_the_collector_is_back():
    """The first collection after a load must not walk its records (at 150,000 pods that
    walk cost ~0.4 s): they are frozen while the collector is still off."""
    from kubectl_tspread.snapshot import demo

    demo._decoded.cache_clear()  # a cached demo would build no records
    gc.collect()
    before = gc.get_stats()[0]["collections"], gc.get_freeze_count()
    snap = load_quietly(snapshot_mod.load_snapshot, SourceOptions(demo=True))
    collections, frozen = gc.get_stats()[0]["collections"], gc.get_freeze_count()
    assert snap.pods and gc.isenabled()
    assert collections == before[0]  # no collection ran between the load and the freeze
    assert frozen > before[1] + len(snap.pods)  # ... and the records were frozen
