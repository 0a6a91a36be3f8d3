"""Live answers from a misbehaving server, fuzzed (hypothesis) and replayed from a corpus.

Whatever the server on 127.0.0.1 does — slow bodies, 5xx storms, broken JSON, lists of the
wrong shape, continue tokens that loop, absurd Retry-After — a run of any command ends within
its bound with exit 0-3, at most one `error:` line, no traceback or internal error, and
nothing on stdout unless it succeeded. The fuzz run is derandomized with a fixed number of
examples (a fixed budget in CI); the minimal cases it and the issue found are kept in
tests/data/hostile-live/ and replayed one by one.
"""

from __future__ import annotations

import json
import pathlib
import tempfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apiobjects import node_obj
from hostileapi import Outcome, run_cli

CORPUS = pathlib.Path(__file__).parent / "data" / "hostile-live"
REQUEST_TIMEOUT = 1.0
BOUND = 12.0  # seconds for a whole run: each GET, retries included, ends by --request-timeout


MAX_REQUESTS = 2_100  # live.py's page bound (2,000), 14 kinds x 5 attempts, the pages asked for ahead


def check(outcome: Outcome, bound: float = BOUND, args: list | tuple = ()) -> None:
    assert outcome.seconds < bound, f"ran {outcome.seconds:.1f}s"
    assert outcome.requests <= MAX_REQUESTS, f"{outcome.requests} requests"
    assert 0 <= outcome.code <= 3, (outcome.code, outcome.stderr)
    assert len(outcome.error_lines) <= 1, outcome.stderr
    assert "Traceback" not in outcome.stderr and "error: unexpected" not in outcome.stderr, outcome.stderr
    if outcome.code != 0 and "--execute" in args:
        # the plan is shown whole before anything is done (cli/execute.show_plan), then the run may
        # fail: a whole document, not half of one (these cases ask for -o json to see that)
        assert not outcome.stdout or json.loads(outcome.stdout)["kind"] == "DrainPlan", outcome.stdout[:200]
    elif outcome.code != 0:
        assert outcome.stdout == "", "half an answer on stdout"
        assert outcome.stderr.startswith("error: ") or "\nerror: " in outcome.stderr, outcome.stderr


# ---- the fuzz run ----------------------------------------------------------------------------

_NODE = {k: v for k, v in node_obj("n1", zone="a").items() if k not in ("kind", "apiVersion")}
_RETRY_AFTER = st.sampled_from(["inf", "-inf", "1e308", "-5", "soon", "99999", "0", "nan", "0.05", "",
                                "Wed, 21 Oct 2015 07:28:00 GMT", "Fri, 31 Dec 9999 23:59:59 GMT"])
_SCALAR = st.one_of(st.integers(-2**70, 2**70), st.text(max_size=8), st.booleans(), st.none(),
                    st.floats(allow_nan=False))

ANSWERS = st.one_of(
    st.just({"status": 200, "list": {}}),
    st.just({"status": 200, "list": {"items": [_NODE]}}),
    st.builds(lambda s, ra: {"status": s, "headers": {"Retry-After": ra}},
              st.sampled_from([429, 500, 502, 503, 504]), _RETRY_AFTER),
    st.builds(lambda s, ra: {"status": s, "status_details": {"retryAfterSeconds": ra}},
              st.sampled_from([429, 503]), st.one_of(_SCALAR, _RETRY_AFTER)),
    st.builds(lambda s, m: {"status": s, "message": m}, st.sampled_from([400, 401, 403, 404, 405, 410, 422, 500]),
              st.one_of(st.text(max_size=40), st.integers(), st.just("line\nerror: forged\n" * 500))),
    st.builds(lambda raw: {"status": 200, "raw": raw},
              st.one_of(st.sampled_from(['{"kind": ', "[]", "null", "5", '"x"', "{}", '{"items": {}}']),
                        st.text(max_size=20))),
    st.builds(lambda items: {"status": 200, "list": {"items": items}},
              st.one_of(_SCALAR, st.lists(_SCALAR, min_size=1, max_size=3),
                        st.dictionaries(st.text(max_size=3), _SCALAR, max_size=2))),
    st.builds(lambda token, items: {"status": 200, "list": {"continue": token, "items": items}},
              st.one_of(st.sampled_from(["same", "new"]), _SCALAR), st.sampled_from([[], [_NODE]])),
    st.builds(lambda t: {"status": 200, "list": {}, "trickle": t}, st.sampled_from([0.3, 0.6])),
    st.just({"status": 200, "list": {}, "stall": 3}),
    # the third round's: bodies cut short, redirects, encodings and lengths that lie, a 2xx Status
    st.builds(lambda n: {"status": 200, "list": {"items": [_NODE]}, "truncate": n}, st.integers(0, 200)),
    st.builds(lambda s, to: {"status": s, "headers": {"Location": to}}, st.sampled_from([301, 302, 307, 308]),
              st.sampled_from(["/api/v1/nodes", "http://10.0.0.1/", "", "::"])),
    st.builds(lambda h: {"status": 200, "list": {"items": [_NODE]}, "headers": h},
              st.sampled_from([{"Content-Encoding": "gzip"}, {"Content-Encoding": "deflate"},
                               {"Content-Length": "1"}, {"Content-Type": "text/html"}])),
    st.builds(lambda code: {"status": 200, "body": {"kind": "Status", "status": "Failure", "code": code}},
              st.one_of(st.sampled_from([401, 403, 404, 410, 429, 500]), _SCALAR)),
)

SCENARIOS = st.fixed_dictionaries({
    "args": st.sampled_from([["distribution", "-A"], ["why-pending", "-A"], ["drain-safe", "n1"],
                             ["distribution", "-A", "-o", "json"]]),
    "answers": st.lists(ANSWERS, min_size=1, max_size=4),
    "request_timeout": st.just(f"{REQUEST_TIMEOUT:g}s"),
})


@settings(max_examples=30, derandomize=True, deadline=None, database=None, print_blob=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(scenario=SCENARIOS)
def test_any_server_behaviour_ends_in_bounds(scenario):
    with tempfile.TemporaryDirectory() as directory:
        outcome = run_cli(scenario, directory)
    check(outcome)


# ---- the corpus ------------------------------------------------------------------------------

CASES = sorted(CORPUS.glob("*.json"))


def test_the_corpus_is_there():
    assert len(CASES) >= 10


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_a_kept_case_ends_in_bounds_with_its_message(path, tmp_path):
    case = json.loads(path.read_text())
    outcome = run_cli(case, str(tmp_path))
    check(outcome, case.get("bound", BOUND), case.get("args") or ())
    expect = case.get("expect", {})
    if "code" in expect:
        assert outcome.code == expect["code"], outcome.stderr
    if "stderr" in expect:  # one part of the message, or several (around a port, say)
        wants = expect["stderr"] if isinstance(expect["stderr"], list) else [expect["stderr"]]
        assert all(want in outcome.stderr for want in wants), outcome.stderr
