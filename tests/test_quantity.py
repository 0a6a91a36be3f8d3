"""Resource quantities: parsed to the scheduler's integers, and written back as people write them."""

from __future__ import annotations

import pytest

from kubectl_tspread.model.quantity import format_quantity, to_scheduler_units
from kubectl_tspread.render.pending import requests_text


@pytest.mark.parametrize("resource,text,value", [
    ("cpu", "500m", 500),
    ("cpu", "2", 2000),
    ("cpu", "1.5", 1500),
    ("memory", "512Mi", 512 * 2**20),
    ("memory", "4Gi", 4 * 2**30),
    ("memory", "1G", 10**9),
    ("pods", "110", 110),
], ids=["cpu millicores", "whole cores", "fractional cores", "binary Mi", "binary Gi", "decimal G", "a count"])
def test_parse(resource, text, value):
    assert to_scheduler_units(resource, text) == value


@pytest.mark.parametrize("resource,value,text", [
    ("cpu", 1500, "1500m"),
    ("cpu", 2000, "2"),
    ("memory", 512 * 2**20, "512Mi"),
    ("memory", 3 * 2**30, "3Gi"),
    ("memory", 10**9, "1000000000"),
    ("hugepages-2Mi", 4 * 2**20, "4Mi"),
    ("nvidia.com/gpu", 1, "1"),
], ids=["cpu below a core stays in millicores", "whole cores", "exact Mi", "exact Gi",
        "decimal bytes stay bytes", "hugepages in binary units", "extended resource is a count"])
def test_format(resource, value, text):
    assert format_quantity(resource, value) == text


def test_requests_text_skips_zero_and_the_pod_count():
    assert requests_text({"pods": 1, "memory": 512 * 2**20, "cpu": 1500, "ephemeral-storage": 0}) == \
        "1500m cpu, 512Mi memory"
