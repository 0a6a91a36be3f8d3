"""Pod pages decoded in a helper process (cli/workers.PageChild, snapshot/live.py's _pages),
through the real `kubernetes` client over HTTP on 127.0.0.1 (tests/fakeapi.py).

The helper changes how long a load takes, never what it gives: the same records in the same
order, the same error with the same place in the list, a list read again here when the helper
refuses a page or dies, and no process left behind."""

from __future__ import annotations

import os
import time

import pytest

from fakeapi import raw_pod
from forking import CountingPages, gone, page_helpers
from kubectl_tspread.model.errors import ClusterError
from kubectl_tspread.snapshot.live import KubeOptions, RetryPolicy, connect
from test_live import api, kubeconfig  # noqa: F401 - the fake API server and a kubeconfig for it, as fixtures

PODS = 2600  # six pages of 500: the helper takes more than half of them, this process the rest
LIST = "/api/v1/namespaces/prod/pods"


def pods(kubeconfig: str, helpers=None) -> list:
    cluster = connect(KubeOptions(kubeconfig=kubeconfig), retry=RetryPolicy(base=0.01, sleep=lambda s: None),
                      page_helpers=helpers)
    return list(cluster.list("Pod"))


def add_pods(api, broken: int | None = None) -> None:
    objs = [raw_pod(f"p{i:04d}", "prod", node="n1", labels={"app": f"a{i % 7}"}) for i in range(PODS)]
    if broken is not None:
        objs[broken]["spec"]["priority"] = "high"  # a number in the API: no pod decodes with it
    api.add(*objs)


def test_a_helped_list_gives_the_records_read_here_in_order_and_leaves_no_process(api, kubeconfig):
    add_pods(api)
    alone = pods(kubeconfig)
    made: list = []
    helped = pods(kubeconfig, page_helpers(made))
    assert helped == alone and [p.name for p in helped] == [f"p{i:04d}" for i in range(PODS)]
    assert len(made) == 1 and made[0].sent >= 1  # the first page at least: the helper is idle then
    assert gone(made[0].pid)
    assert len(api.logged("GET", LIST)) == 2 * 6  # each list once: nothing read again


def test_a_list_of_one_page_and_lists_of_other_kinds_start_no_helper(api, kubeconfig):
    """The page without a continue token ends the list: it is decoded here, where the token is
    read, and a helper starts (forks) only at the first page it is sent; other kinds never do."""
    api.add(*[raw_pod(f"p{i:04d}", "prod", node="n1") for i in range(300)])
    made: list = []
    assert [p.name for p in pods(kubeconfig, page_helpers(made))] == [f"p{i:04d}" for i in range(300)]
    cluster = connect(KubeOptions(kubeconfig=kubeconfig), page_helpers=page_helpers(made))
    assert list(cluster.list("Node")) == [] and made == []


def test_a_slow_helper_is_sent_a_page_only_when_it_will_start_it_next(api, kubeconfig):
    """The helper gets the page it decodes and the next at most: the others are decoded here
    meanwhile, whatever share that makes."""
    add_pods(api)
    alone = pods(kubeconfig)
    made: list = []

    def start(fn):
        child = CountingPages(lambda data, token: (time.sleep(1.0), fn(data, token))[1])
        made.append(child)
        return child

    assert pods(kubeconfig, start) == alone
    assert made[0].sent == 2  # pages 0 and 1: pages 2-5 came while it decoded the first


# the first page goes to the helper (idle then); the last, with no continue token, is decoded here
@pytest.mark.parametrize("broken, lists", [(250, 2), (2550, 1)], ids=["on-a-helped-page", "on-a-page-read-here"])
def test_a_malformed_pod_gets_the_error_it_gets_without_the_helper(api, kubeconfig, broken, lists):
    """Refused by the helper, the list is read again here for the error (`lists`: how often the
    helped run starts it); met here, its place counts the helper's pages before it."""
    add_pods(api, broken)
    with pytest.raises(ClusterError) as alone:
        pods(kubeconfig)
    made: list = []
    with pytest.raises(ClusterError) as helped:
        pods(kubeconfig, page_helpers(made))
    assert str(helped.value) == str(alone.value)
    assert f"item {broken} of the PodList" in str(helped.value) and "spec.priority" in str(helped.value)
    assert len([r for r in api.logged("GET", LIST) if "continue" not in r.query]) == 1 + lists
    assert gone(made[0].pid)


def test_a_helper_that_dies_has_the_list_read_again_here(api, kubeconfig):
    add_pods(api)
    alone = pods(kubeconfig)
    made: list = []
    helped = pods(kubeconfig, page_helpers(made, decode=lambda data, token: os._exit(7)))
    assert helped == alone
    first_pages = [r for r in api.logged("GET", LIST) if "continue" not in r.query]
    assert len(first_pages) == 3  # the list alone, the helped one, the helped one read again
    assert gone(made[0].pid)


def test_a_list_restarted_on_410_is_whole_and_its_helper_is_stopped(api, kubeconfig):
    add_pods(api)
    alone = pods(kubeconfig)
    api.expire_continue(1)
    made: list = []
    assert pods(kubeconfig, page_helpers(made)) == alone
    assert len(made) == 1 and gone(made[0].pid)
