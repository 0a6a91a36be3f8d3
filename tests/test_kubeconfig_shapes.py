"""A broken kubeconfig is one `error:` line naming the file, the entry and the field, exit 1 —
never a TypeError from inside the `kubernetes` loader; exec plugins end within their time limit.
Run as the real program (`python -m kubectl_tspread`), against a server on 127.0.0.1."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import time

import pytest
import yaml

from fakeapi import FakeApiServer, raw_node
from kubectl_tspread.model.errors import ClusterError
from kubectl_tspread.snapshot import execauth
from kubectl_tspread.snapshot.live import KubeOptions, RetryPolicy, connect


def _config(server: str, **edits) -> dict:
    doc = {"apiVersion": "v1", "kind": "Config", "current-context": "c",
           "clusters": [{"name": "c", "cluster": {"server": server}}],
           "users": [{"name": "u", "user": {"token": "abc"}}],
           "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}]}
    for key, change in edits.items():
        change(doc)
    return doc


def _set(path: str, value):
    """An edit of the document: `_set("clusters.0.cluster.server", 12345)`."""
    def edit(doc):
        *parents, last = path.split(".")
        cur = doc
        for p in parents:
            cur = cur[int(p)] if p.isdigit() else cur[p]
        cur[int(last) if last.isdigit() else last] = value
    return edit


def _run(tmp_path, doc: dict, *extra: str) -> subprocess.CompletedProcess:
    path = tmp_path / "config"
    path.write_text(yaml.safe_dump(doc, allow_unicode=True), encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    return subprocess.run([sys.executable, "-m", "kubectl_tspread", "distribution", "--kubeconfig", str(path),
                           "--request-timeout", "5s", *extra], capture_output=True, text=True, env=env, timeout=60)


CASES = [
    pytest.param(_set("clusters", 5), "clusters is a number (5), not a list of clusters", id="clusters: 5"),
    pytest.param(_set("contexts", ["c"]), "contexts[0] is a string ('c'), not a mapping with a name and a context",
                 id="a context entry that is a string"),
    pytest.param(_set("clusters", ["c"]), "clusters[0] is a string ('c'), not a mapping", id="a cluster entry that is a string"),
    pytest.param(_set("clusters.0.cluster", "x"), 'cluster "c": cluster is a string', id="a cluster body that is a string"),
    pytest.param(_set("users.0.user", ["x"]), 'user "u": user is a list, not a mapping', id="a user body that is a list"),
    pytest.param(_set("clusters.0.name", {"a": 1}), "clusters[0].name is a dict, not a string", id="a name that is a map"),
    pytest.param(_set("current-context", 7), "current-context is a number (7), not a context name",
                 id="current-context a number"),
    pytest.param(_set("clusters.0.cluster.server", 12345), 'cluster "c": server is a number (12345), not a URL',
                 id="server: 12345"),
    pytest.param(_set("clusters.0.cluster.server", "ftp://x"), "server 'ftp://x' is not an http(s) URL",
                 id="server not http"),
    pytest.param(_set("clusters.0.cluster.certificate-authority-data", "!!!notbase64"),
                 'cluster "c": certificate-authority-data is not base64', id="CA data not base64"),
    pytest.param(_set("clusters.0.cluster.insecure-skip-tls-verify", "yes"),
                 "insecure-skip-tls-verify is a string ('yes'), not true or false", id="insecure flag a string"),
    pytest.param(_set("users.0.user", {"tokenFile": "/nonexistent/tok"}),
                 'user "u": tokenFile /nonexistent/tok does not exist; point it at the token', id="missing tokenFile"),
    pytest.param(_set("users.0.user.token", "ab\r\ncd"), 'the bearer token of user "u" holds a line break',
                 id="token with CR/LF"),
    pytest.param(_set("users.0.user.token", "t\u00f6k\u20acn"), 'the bearer token of user "u" holds a line break or a '
                 "character that cannot be sent in an HTTP header", id="token beyond Latin-1"),
    pytest.param(_set("users.0.user", {"exec": "aws"}), 'user "u": exec is a string', id="exec a string"),
    pytest.param(_set("users.0.user", {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": "x",
                                                "args": [1]}}),
                 'user "u": exec.args is a list, not a list of strings', id="exec args not strings"),
    pytest.param(_set("contexts.0.context.namespace", ["a"]), 'context "c": namespace is a list', id="namespace a list"),
    pytest.param(_set("clusters.0.cluster.proxy-url", "::"), "cluster \"c\": proxy-url '::' is not a proxy URL",
                 id="proxy-url not a URL"),
    pytest.param(_set("clusters.0.cluster.proxy-url", "ftp://proxy:21"), "proxy-url 'ftp://proxy:21' is not a proxy URL",
                 id="proxy-url of another scheme"),
    # issue 58, third adversarial round: auth-providers were skipped (gcp: an AttributeError), so
    # the requests went out without credentials; a NUL was a ValueError from inside subprocess
    pytest.param(_set("users.0.user", {"auth-provider": "oidc"}),
                 'user "u": auth-provider is a string (\'oidc\'), not a mapping', id="auth-provider a string"),
    pytest.param(_set("users.0.user", {"auth-provider": {"name": "gcp", "config": {}}}),
                 'the gcp auth-provider of user "u" was removed from kubectl (1.26); use the gke-gcloud-auth-plugin',
                 id="the removed gcp auth-provider"),
    pytest.param(_set("users.0.user", {"auth-provider": {"name": "azure"}}),
                 "use the kubelogin credential plugin", id="the removed azure auth-provider"),
    pytest.param(_set("users.0.user", {"auth-provider": {"name": "keycloak", "config": {}}}),
                 'the auth-provider "keycloak" of user "u" is none kubectl knows (only oidc)',
                 id="an auth-provider of no known name"),
    pytest.param(_set("users.0.user", {"auth-provider": {"name": "oidc", "config": {"id-token": "abc.def=.x"}}}),
                 'the oidc auth-provider of user "u" has no id-token in the form of a JWT', id="an oidc id-token no JWT"),
    pytest.param(_set("users.0.user", {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": "x",
                                                "args": ["a\0b"]}}),
                 'user "u": exec.args holds a NUL character', id="exec args with a NUL"),
    # each said 'cannot reach the API server' or 'File does not exist', or a UnicodeEncodeError
    pytest.param(_set("clusters.0.cluster.server", "https://127.0.0.1:99999"),
                 "server 'https://127.0.0.1:99999' is not an http(s) URL", id="a server port past 65535"),
    pytest.param(_set("clusters.0.cluster.server", "https://"), "server 'https://' is not an http(s) URL",
                 id="a server URL without a host"),
    pytest.param(_set("clusters.0.cluster.certificate-authority", "/"),
                 'cluster "c": certificate-authority / is not a readable file', id="a CA file that is a directory"),
    pytest.param(_set("users.0.user", {"client-certificate": "nowhere.crt", "client-key": "nowhere.key"}),
                 'user "u": client-certificate ', id="a missing client certificate file"),
    pytest.param(_set("users.0.user", {"username": "j\u00fcrgen\u2603", "password": "p"}),
                 'user "u": username holds a line break or a character beyond Latin-1', id="a username beyond Latin-1"),
    # client-go refuses a list with a name twice; the first entry was taken, where kubectl stops
    pytest.param(lambda doc: doc["contexts"].append({"name": "c", "context": {"cluster": "elsewhere"}}),
                 "contexts[0] and contexts[1] are both named 'c', and kubectl refuses such a file",
                 id="a context name twice in one file"),
]


@pytest.mark.parametrize("edit, message", CASES)
def test_a_malformed_kubeconfig_is_one_error_line_naming_the_field(tmp_path, edit, message):
    with FakeApiServer() as api:
        api.add(raw_node("n1"))
        got = _run(tmp_path, _config(api.url, edit=edit))
    assert (got.returncode, got.stdout) == (1, ""), got.stderr
    assert got.stderr.startswith("error: ") and got.stderr.count("\n") == 1, got.stderr
    assert message in got.stderr
    assert "unexpected" not in got.stderr


def test_a_request_timeout_beyond_any_duration_is_a_usage_error(tmp_path):
    got = _run(tmp_path, _config("http://127.0.0.1:1"), "--request-timeout", "99999999999999h")
    assert got.returncode == 2 and got.stdout == ""
    assert got.stderr.count("\n") == 1 and got.stderr.startswith("error: ")
    assert "'99999999999999h' is longer than any duration kubectl accepts" in got.stderr


# ---- exec plugins ---------------------------------------------------------------------------

def _exec_config(tmp_path, script: str) -> str:
    path = tmp_path / "plugin.py"
    path.write_text(script)
    doc = _config("http://127.0.0.1:1", user=_set("users.0.user", {"exec": {
        "apiVersion": "client.authentication.k8s.io/v1beta1", "command": sys.executable, "args": [str(path)],
        "interactiveMode": "Never"}}))
    cfg = tmp_path / "config"
    cfg.write_text(yaml.safe_dump(doc))
    return str(cfg)


def test_an_exec_plugin_that_never_exits_is_killed_at_its_time_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(execauth, "EXEC_TIMEOUT", 1.0)
    cfg = _exec_config(tmp_path, "import sys, time\nsys.stderr.write('waiting for the browser\\n')\n"
                                 "sys.stderr.flush()\ntime.sleep(60)\n")
    start = time.monotonic()
    with pytest.raises(ClusterError) as e:
        connect(KubeOptions(kubeconfig=cfg), retry=RetryPolicy(attempts=1), environ={})
    assert time.monotonic() - start < 5
    assert "failed (it did not finish within 1s; it said: waiting for the browser)" in str(e.value)


def test_an_exec_plugin_that_prints_without_end_is_stopped_at_the_output_bound(tmp_path, monkeypatch):
    """communicate() kept all a plugin printed: `yes` as a plugin ran the run out of memory
    (error: unexpected MemoryError) before its time limit came."""
    monkeypatch.setattr(execauth, "EXEC_TIMEOUT", 5.0)
    cfg = _exec_config(tmp_path, "import sys, time\nsys.stderr.write('spinning\\n')\nsys.stderr.flush()\n"
                                 "for _ in range(40):\n    sys.stdout.buffer.write(b'y' * (1 << 20))\n"
                                 "sys.stdout.flush()\ntime.sleep(60)\n")
    start = time.monotonic()
    with pytest.raises(ClusterError) as e:
        connect(KubeOptions(kubeconfig=cfg), retry=RetryPolicy(attempts=1), environ={})
    assert time.monotonic() - start < 4
    assert "failed (it printed more than 16 MiB on stdout; no ExecCredential is that long; it said: spinning)" \
        in str(e.value)


def test_an_exec_plugins_stderr_is_in_the_error_on_one_line(tmp_path):
    cfg = _exec_config(tmp_path, "import sys\nsys.stderr.write('line one\\nerror: token expired\\n')\nsys.exit(4)\n")
    with pytest.raises(ClusterError) as e:
        connect(KubeOptions(kubeconfig=cfg), retry=RetryPolicy(attempts=1), environ={})
    assert "(the process returned 4; it said: line one / error: token expired)" in str(e.value)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("stdout, what", [
    ("not json", "its output is not an ExecCredential (not JSON)"),
    ("[" * 300 + "]" * 300, "its output is JSON nested deeper than 200 levels, not an ExecCredential"),
    ('{"apiVersion": "client.authentication.k8s.io/v1beta1", "kind": "ExecCredential"}', "has no status"),
    ('{"apiVersion": "client.authentication.k8s.io/v1beta1", "kind": "ExecCredential", "status": {}}',
     "returned neither a token nor a client certificate and key"),
])
def test_an_exec_plugins_bad_answer_is_named(tmp_path, stdout, what):
    cfg = _exec_config(tmp_path, f"print({stdout!r})\n")
    with pytest.raises(ClusterError, match=re.escape(what)):
        connect(KubeOptions(kubeconfig=cfg), retry=RetryPolicy(attempts=1), environ={})


@pytest.mark.parametrize("content, message", [
    (b'clusters: "\xff\xfe"\n', "is not UTF-8 text; fix it or pass another --kubeconfig"),
    (b"clusters: " + b"[" * 50_000 + b"]" * 50_000 + b"\n", "is not valid YAML"),  # libyaml's own bound
    (b"clusters: " + b"[" * 300 + b"]" * 300 + b"\n", "is nested deeper than 200 levels"),
    (b"a: &a [x, x, x, x, x, x, x, x, x, x]\n" + b"".join(b"%s: &%s [*%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s]\n"
                                                             % ((bytes([c]),) * 2 + (bytes([c - 1]),) * 10)
                                                             for c in range(ord("b"), ord("j"))), "aliases stand for more than"),
    (b"- apiVersion: v1\n", "top level is not a mapping"),
], ids=["not UTF-8", "nested 50,000 deep", "nested 300 deep", "a billion laughs", "a sequence"])
def test_a_kubeconfig_that_is_not_yaml_text_is_one_error_line(tmp_path, content, message):
    path = tmp_path / "config"
    path.write_bytes(content)
    got = subprocess.run([sys.executable, "-m", "kubectl_tspread", "distribution", "--kubeconfig", str(path)],
                         capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)),
                         timeout=60)
    assert (got.returncode, got.stdout) == (1, "") and got.stderr.count("\n") == 1
    assert got.stderr.startswith(f"error: kubeconfig {path} ") and message in got.stderr


def test_a_token_file_ending_in_a_newline_is_trimmed_as_client_go_does(tmp_path):
    (tmp_path / "token").write_text("t0k\n")
    with FakeApiServer(user_for_token={"t0k": "alice"}) as api:
        api.add(raw_node("n1"))
        doc = _config(api.url, user=_set("users.0.user", {"tokenFile": "token"}))  # relative to the kubeconfig
        got = _run(tmp_path, doc)
        assert api.requests and api.requests[-1].headers["Authorization"] == "Bearer t0k"
    assert got.returncode == 0, got.stderr


def test_an_exec_plugin_may_answer_with_a_client_certificate(tmp_path):
    from fakeapi import make_self_signed_cert

    pair = make_self_signed_cert(str(tmp_path))
    if pair is None:
        pytest.skip("openssl CLI not installed")
    cert, key = (open(p).read() for p in pair)
    status = {"clientCertificateData": cert, "clientKeyData": key}
    cred = {"apiVersion": "client.authentication.k8s.io/v1beta1", "kind": "ExecCredential", "status": status}
    cfg = _exec_config(tmp_path, f"import json\nprint(json.dumps({cred!r}))\n")
    live = connect(KubeOptions(kubeconfig=cfg), retry=RetryPolicy(attempts=1), environ={})
    assert open(live.resolved.configuration.cert_file).read() == cert
    assert open(live.resolved.configuration.key_file).read() == key


def test_a_socks_proxy_without_pysocks_is_named(tmp_path):
    if importlib.util.find_spec("socks") is not None:
        pytest.skip("PySocks is installed here: the proxy is then used")
    got = _run(tmp_path, _config("http://127.0.0.1:1", edit=_set("clusters.0.cluster.proxy-url", "socks5://127.0.0.1:1")))
    assert (got.returncode, got.stdout) == (1, ""), got.stderr
    assert got.stderr.count("\n") == 1 and "is a SOCKS proxy, which needs the PySocks package" in got.stderr


def test_a_kubeconfig_that_is_no_regular_file_is_named_not_skipped(tmp_path, monkeypatch):
    """A directory (or FIFO) given as the kubeconfig: kubectl fails on it; it was skipped ('no
    kubeconfig found', or another file of KUBECONFIG chosen without a word) and never opened."""
    from kubectl_tspread.snapshot.live import KubeOptions, connect

    good = tmp_path / "config"
    good.write_text(yaml.safe_dump(_config("http://127.0.0.1:1")))
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(ClusterError, match=r"kubeconfig .*/fifo \(--kubeconfig\) is not a regular file"):
        connect(KubeOptions(kubeconfig=str(fifo)), environ={})
    with pytest.raises(ClusterError, match=r"kubeconfig .* \(in KUBECONFIG\) is not a regular file"):
        connect(KubeOptions(), environ={"KUBECONFIG": os.pathsep.join([str(tmp_path), str(good)])})


@pytest.mark.parametrize("host, port", [("::::", "443"), ("10.0.0.1 5", "443"), ("10.0.0.1", "99999")],
                         ids=["a host that is no address", "a host with a space", "a port past 65535"])
def test_in_cluster_an_address_no_client_can_use_is_named(tmp_path, host, port):
    """The pod's KUBERNETES_SERVICE_HOST/PORT: a ValueError from inside the loader ('::::'), or
    'cannot reach the API server' for an address no connection could be made to."""
    from kubectl_tspread.snapshot.live import KubeOptions, connect

    (tmp_path / "token").write_text("t")
    (tmp_path / "ca.crt").write_text("not a certificate")
    env = {"KUBERNETES_SERVICE_HOST": host, "KUBERNETES_SERVICE_PORT": port, "KUBECONFIG": str(tmp_path / "none")}
    with pytest.raises(ClusterError, match="in-cluster config failed: KUBERNETES_SERVICE_HOST and "
                                           "KUBERNETES_SERVICE_PORT .* are no host and port"):
        connect(KubeOptions(), environ=env, service_account_dir=str(tmp_path))
