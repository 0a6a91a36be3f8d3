"""Proxies from the environment and oidc auth-providers, as client-go takes them (issue 58,
third adversarial round), through the real `kubernetes` client over HTTP on 127.0.0.1.

- A loopback server is never proxied (Go's ProxyFromEnvironment): a local cluster stays
  reachable with a corporate HTTPS_PROXY set. Other servers go through HTTP(S)_PROXY, one
  written without a scheme being an http:// one; a proxy that cannot be used is one error
  naming the variable (it was a LocationParseError or ProxySchemeUnknown from inside urllib3).
- An oidc token refresh whose issuer never answers ends within the credential time limit
  (it waited without end: the package asks the issuer with no timeout).
- A client certificate that cannot be loaded is named as the user's, not as the cluster's CA.
"""

from __future__ import annotations

import base64
import json
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import yaml

from fakeapi import FakeApiServer, make_self_signed_cert, raw_node, write_kubeconfig
from hostileapi import HostileApiServer
from kubectl_tspread.cli import main
from kubectl_tspread.model.errors import ClusterError
from kubectl_tspread.snapshot import execauth
from kubectl_tspread.snapshot.live import KubeOptions, RetryPolicy, connect

REMOTE = "http://api.cluster.example:6443"  # not loopback; reached only through the proxy below


class ForwardProxy:
    """A plain HTTP forward proxy that relays every absolute-URI request to `target`'s port on 127.0.0.1
    and remembers the URIs it was asked for."""

    def __init__(self, target: str, credentials: str | None = None):
        self.asked: list[str] = []
        proxy = self

        class H(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                proxy.asked.append(self.path)
                if credentials and self.headers.get("Proxy-Authorization") != "Basic " + base64.b64encode(
                        credentials.encode()).decode():
                    self.send_response(407)
                    self.send_header("Proxy-Authenticate", 'Basic realm="proxy"')
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                path = self.path.split("://", 1)[1].split("/", 1)[1]
                direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))
                with direct.open(f"{target}/{path}", timeout=5) as r:
                    data = r.read()
                    self.send_response(r.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *a) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self._httpd.daemon_threads = True
        self.address = f"127.0.0.1:{self._httpd.server_address[1]}"
        threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


def _run(capsys, server: str, directory) -> tuple[int, str, str]:
    kubeconfig = write_kubeconfig(str(directory / "config"), {"c": server}, {"u": {}},
                                  {"c": {"cluster": "c", "user": "u"}}, "c")
    with pytest.raises(SystemExit) as exc:
        main(["distribution", "-A", "--kubeconfig", kubeconfig, "--request-timeout", "3s"])
    out, err = capsys.readouterr()
    return exc.value.code, out, err


@pytest.mark.parametrize("var", ["HTTP_PROXY", "http_proxy"])
def test_a_loopback_server_is_never_proxied(capsys, proxyless, monkeypatch, var):
    monkeypatch.setenv(var, "http://127.0.0.1:1")  # nothing listens there
    with FakeApiServer() as api:
        api.add(raw_node("n1"))
        code, out, err = _run(capsys, api.url, proxyless)
    # before: "cannot reach the API server … Unable to connect to proxy"
    assert code == 0, err
    assert "No workloads" in out


@pytest.mark.parametrize("written", ["http://{}", "{}"], ids=["http://host:port", "host:port without a scheme"])
def test_another_server_is_reached_through_the_environments_proxy(capsys, proxyless, monkeypatch, written):
    with FakeApiServer() as api:
        api.add(raw_node("n1"))
        proxy = ForwardProxy(api.url)
        try:
            monkeypatch.setenv("HTTP_PROXY", written.format(proxy.address))
            code, out, err = _run(capsys, REMOTE, proxyless)
        finally:
            proxy.close()
    # before, without a scheme: "error: unexpected ProxySchemeUnknown"
    assert code == 0, err
    assert any(uri.startswith(REMOTE + "/api/v1/nodes") for uri in proxy.asked), proxy.asked


def test_no_proxy_sends_a_server_past_the_proxy(capsys, proxyless, monkeypatch):
    proxy = ForwardProxy("http://127.0.0.1:1")
    try:
        monkeypatch.setenv("HTTP_PROXY", f"http://{proxy.address}")
        monkeypatch.setenv("NO_PROXY", "10.0.0.0/8,.example")
        code, out, err = _run(capsys, REMOTE, proxyless)  # straight to a name that does not resolve
    finally:
        proxy.close()
    assert code == 1 and out == ""
    assert proxy.asked == []


@pytest.mark.parametrize("value, said", [
    ("::::", "the environment's HTTP_PROXY '::::' is not a proxy URL"),
    ("ftp://proxy:21", "the environment's HTTP_PROXY 'ftp://proxy:21' is not a proxy URL"),
], ids=["not a URL", "another scheme"])
def test_a_proxy_in_the_environment_that_cannot_be_used_is_named(capsys, proxyless, monkeypatch, value, said):
    monkeypatch.setenv("HTTP_PROXY", value)
    code, out, err = _run(capsys, REMOTE, proxyless)
    # before: "error: unexpected LocationParseError"
    assert (code, out) == (1, ""), err
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and said in errors[0] and "unexpected" not in err, err


def _b64(doc: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(doc).encode()).decode().rstrip("=")


def test_an_oidc_refresh_whose_issuer_never_answers_ends_at_the_time_limit(proxyless, monkeypatch):
    monkeypatch.setattr(execauth, "EXEC_TIMEOUT", 1.0)
    expired = f"{_b64({'alg': 'none'})}.{_b64({'exp': 1000})}.sig"
    with HostileApiServer([{"status": 200, "list": {}, "stall": 30}]) as issuer:
        path = proxyless / "config"
        path.write_text(yaml.safe_dump({
            "apiVersion": "v1", "kind": "Config", "current-context": "c",
            "clusters": [{"name": "c", "cluster": {"server": "http://127.0.0.1:1"}}],
            "users": [{"name": "u", "user": {"auth-provider": {"name": "oidc", "config": {
                "client-id": "tspread", "client-secret": "s", "id-token": expired, "refresh-token": "r",
                "idp-issuer-url": issuer.url}}}}],
            "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}]}))
        got: list = []

        def run() -> None:
            try:
                connect(KubeOptions(kubeconfig=str(path)), retry=RetryPolicy(attempts=1), environ={})
            except ClusterError as e:
                got.append(e)

        start = time.monotonic()
        worker = threading.Thread(target=run, daemon=True)
        worker.start()
        worker.join(10)
        # before: still waiting for the issuer when the test gave up
        assert not worker.is_alive() and time.monotonic() - start < 5
    assert got and 'the oidc auth-provider of user "u" did not get a token within 1s' in str(got[0])


def test_a_client_certificate_that_cannot_be_loaded_is_named_as_the_users(capsys, proxyless):
    tls = make_self_signed_cert(str(proxyless))
    if tls is None:
        pytest.skip("no openssl CLI to make a certificate")
    pem = lambda path: base64.b64encode(open(path, "rb").read()).decode()  # noqa: E731
    with FakeApiServer(tls=tls) as api:
        path = proxyless / "config"
        path.write_text(yaml.safe_dump({
            "apiVersion": "v1", "kind": "Config", "current-context": "c",
            "clusters": [{"name": "c", "cluster": {"server": api.url, "certificate-authority-data": pem(tls[0])}}],
            "users": [{"name": "u", "user": {"client-certificate-data": pem(tls[0]),
                                             "client-key-data": base64.b64encode(b"no key").decode()}}],
            "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}]}))
        with pytest.raises(SystemExit) as exc:
            main(["distribution", "-A", "--kubeconfig", str(path), "--request-timeout", "3s"])
    out, err = capsys.readouterr()
    # before: "… check the cluster's certificate-authority in your kubeconfig"
    assert (exc.value.code, out) == (1, ""), err
    assert 'the client certificate or key of user "u" cannot be used' in err and "certificate-authority" not in err


def _through_proxy(capsys, proxyless, monkeypatch, api, credentials: str, userinfo: str):
    """The run through a ForwardProxy that wants `credentials`, HTTP_PROXY naming `userinfo`:
    (exit code, stdout, stderr, the proxy's address)."""
    proxy = ForwardProxy(api.url, credentials=credentials)
    try:
        monkeypatch.setenv("HTTP_PROXY", f"http://{userinfo}@{proxy.address}")
        return (*_run(capsys, REMOTE, proxyless), proxy.address)
    finally:
        proxy.close()


def test_a_proxy_urls_user_and_password_are_sent_to_the_proxy(capsys, proxyless, monkeypatch):
    with FakeApiServer() as api:
        api.add(raw_node("n1"))
        code, out, err, _ = _through_proxy(capsys, proxyless, monkeypatch, api, "me:s3cr@t", "me:s3cr%40t")
    # before: the proxy's 407 ("failed to … (407: HTTP 407)"): urllib3 does not send a URL's user info
    assert code == 0, err


def test_a_proxy_that_refuses_the_credentials_is_named_without_the_password(capsys, proxyless, monkeypatch):
    with FakeApiServer() as api:
        code, out, err, address = _through_proxy(capsys, proxyless, monkeypatch, api, "me:right", "me:wrong")
    assert (code, out) == (1, ""), err
    assert f"the proxy http://me:***@{address} between you and the API server" in err
    assert "wrong" not in err


def test_a_password_in_the_server_url_stays_out_of_error_lines(capsys, proxyless):
    with HostileApiServer([{"status": 500}]) as api:
        code, out, err = _run(capsys, api.url.replace("http://", "http://me:hunter2@"), proxyless)
    assert (code, out) == (1, ""), err
    assert "http://me:***@127.0.0.1:" in err and "hunter2" not in err


def test_a_server_url_with_its_scheme_in_capitals_is_read_as_go_reads_it(capsys, proxyless):
    """'HTTPS://…' was refused as no http(s) URL, and the loader applies the CA only to 'https'."""
    tls = make_self_signed_cert(str(proxyless))
    if tls is None:
        pytest.skip("no openssl CLI to make a certificate")
    with FakeApiServer(tls=tls) as api:
        api.add(raw_node("n1"))
        ca = base64.b64encode(open(tls[0], "rb").read()).decode()
        path = write_kubeconfig(str(proxyless / "config"),
                                {"c": {"server": api.url.replace("https://", "HTTPS://"),
                                       "certificate-authority-data": ca}},
                                {"u": {}}, {"c": {"cluster": "c", "user": "u"}}, "c")
        with pytest.raises(SystemExit) as exc:
            main(["distribution", "-A", "--kubeconfig", path, "--request-timeout", "3s"])
    out, err = capsys.readouterr()
    assert exc.value.code == 0, err
