"""The oidc auth-provider's token refresh (snapshot/oidc.py), as client-go makes it, against an
issuer over HTTPS on 127.0.0.1 and the fake API server, through the real `kubernetes` client.

The package's own refresh read the issuer's discovery document with TLS verification off
when the kubeconfig named no idp-certificate-authority, so whoever answered for the issuer
chose where the refresh token and client secret went next; and it passed over a refresh that
failed, sending the expired token on.
"""

from __future__ import annotations

import base64
import json
import ssl
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from fakeapi import FakeApiServer, make_self_signed_cert, raw_node, write_kubeconfig
from kubectl_tspread.cli import main


def _b64(doc: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(doc).encode()).decode().rstrip("=")


def jwt(exp: float) -> str:
    return f"{_b64({'alg': 'none'})}.{_b64({'exp': int(exp), 'sub': 'me'})}.sig"


EXPIRED = jwt(1000)


class Issuer:
    """An OpenID provider over HTTPS: a discovery document naming its token endpoint, which
    answers a refresh_token grant with `answer` (status, JSON) when the client authenticates
    as `style` wants ("basic": the Authorization header; "post": client_id/client_secret in the
    form). Records every request it read: (method, path, headers, form)."""

    def __init__(self, tls: tuple[str, str], answer: tuple[int, dict], style: str = "basic",
                 endpoint: str | None = None):
        self.seen: list[tuple[str, str, dict, dict]] = []
        issuer = self

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a) -> None:
                pass

            def _send(self, status: int, doc: dict) -> None:
                data = json.dumps(doc).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                issuer.seen.append(("GET", self.path, dict(self.headers), {}))
                if self.path == "/realm/.well-known/openid-configuration":
                    self._send(200, {"issuer": issuer.url, "token_endpoint": endpoint or issuer.url + "/token"})
                else:
                    self._send(404, {})

            def do_POST(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                form = dict(urllib.parse.parse_qsl(self.rfile.read(n).decode()))
                issuer.seen.append(("POST", self.path, dict(self.headers), form))
                basic = "Basic " + base64.b64encode(b"tspread:s%3Acret").decode()
                ok = (self.headers.get("Authorization") == basic if style == "basic" else
                      (form.get("client_id"), form.get("client_secret")) == ("tspread", "s:cret"))
                if not ok:
                    self._send(401, {"error": "invalid_client"})
                elif form.get("grant_type") != "refresh_token" or form.get("refresh_token") != "r1":
                    self._send(400, {"error": "invalid_request"})
                else:
                    self._send(*answer)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), H)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(*tls)
        self.server.socket = ctx.wrap_socket(self.server.socket, server_side=True)
        self.url = f"https://127.0.0.1:{self.server.server_address[1]}/realm"

    def __enter__(self) -> "Issuer":
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def tls(tmp_path, proxyless):
    got = make_self_signed_cert(str(tmp_path))
    if got is None:
        pytest.skip("no openssl CLI to make a certificate")
    return got


def _run(capsys, tmp_path, api: FakeApiServer, issuer: Issuer, **config) -> tuple[int, str, str]:
    provider = {"name": "oidc", "config": {"client-id": "tspread", "client-secret": "s:cret", "id-token": EXPIRED,
                                           "refresh-token": "r1", "idp-issuer-url": issuer.url, **config}}
    kubeconfig = write_kubeconfig(str(tmp_path / "config"), {"c": api.url}, {"u": {"auth-provider": provider}},
                                  {"c": {"cluster": "c", "user": "u"}}, "c")
    with pytest.raises(SystemExit) as exc:
        main(["distribution", "-A", "--kubeconfig", kubeconfig, "--request-timeout", "5s"])
    out, err = capsys.readouterr()
    return exc.value.code, out, err


def _pem_data(path: str) -> str:
    return base64.b64encode(open(path, "rb").read()).decode()


def _one_error(code: int, out: str, err: str) -> str:
    assert (code, out) == (1, ""), err
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "unexpected" not in err and "Traceback" not in err, err
    return errors[0]


def test_an_issuer_whose_certificate_nothing_vouches_for_is_never_read(capsys, tmp_path, tls):
    fresh = jwt(time.time() + 3600)
    with FakeApiServer(user_for_token={fresh: "me"}) as api, Issuer(tls, (200, {"id_token": fresh})) as issuer:
        api.add(raw_node("n1"))
        line = _one_error(*_run(capsys, tmp_path, api, issuer))
    # before: the discovery document was read with verification off (the issuer saw the GET)
    assert issuer.seen == []
    assert 'the oidc auth-provider of user "u" cannot renew its expired id-token' in line
    assert "failed TLS verification" in line and "idp-certificate-authority" in line


@pytest.mark.parametrize("style", ["basic", "post"])
@pytest.mark.parametrize("ca", ["data", "file"])
def test_a_refresh_verified_by_the_issuers_ca_gets_the_new_token_to_the_api_server(capsys, tmp_path, tls, ca, style):
    fresh = jwt(time.time() + 3600)
    config = {"idp-certificate-authority-data": _pem_data(tls[0])} if ca == "data" else \
        {"idp-certificate-authority": tls[0]}
    with FakeApiServer(user_for_token={fresh: "me"}) as api, \
            Issuer(tls, (200, {"id_token": fresh, "refresh_token": "r2"}), style) as issuer:
        api.add(raw_node("n1"))
        code, out, err = _run(capsys, tmp_path, api, issuer, **config)
    assert code == 0, err
    assert [(m, p) for m, p, _, _ in issuer.seen][:2] == [("GET", "/realm/.well-known/openid-configuration"),
                                                          ("POST", "/realm/token")]
    # an endpoint that wants the client in the form refuses the Basic header first (golang.org/x/oauth2's
    # auto-detection), and is then asked with the form
    assert len(issuer.seen) == (2 if style == "basic" else 3)
    assert issuer.seen[-1][3]["grant_type"] == "refresh_token"


@pytest.mark.parametrize("answer,said", [
    ((400, {"error": "invalid_grant", "error_description": "Token is not active"}),
     "the token endpoint answered 400: invalid_grant Token is not active; log in again"),
    ((200, {"access_token": "a"}), "the token endpoint's answer holds no id_token"),
])
def test_a_refresh_the_issuer_refuses_is_one_error_not_the_expired_token_sent_on(capsys, tmp_path, tls, answer, said):
    with FakeApiServer(user_for_token={}) as api, Issuer(tls, answer) as issuer:
        line = _one_error(*_run(capsys, tmp_path, api, issuer, **{"idp-certificate-authority": tls[0]}))
        # before: the refresh's failure was passed over and the API server saw the expired token
        assert not [r for r in api.requests if r.headers.get("Authorization")]
    assert said in line and 'the oidc auth-provider of user "u" could not renew its expired id-token' in line


def test_no_discovery_document_is_named_with_its_url(capsys, tmp_path, tls):
    with FakeApiServer() as api, Issuer(tls, (200, {})) as issuer:
        issuer.url = issuer.url.replace("/realm", "/elsewhere")
        line = _one_error(*_run(capsys, tmp_path, api, issuer, **{"idp-certificate-authority": tls[0]}))
    assert f"{issuer.url}/.well-known/openid-configuration answered 404; check idp-issuer-url" in line


def test_an_expired_token_without_a_refresh_token_says_log_in_again(capsys, tmp_path, tls):
    with FakeApiServer() as api, Issuer(tls, (200, {})) as issuer:
        line = _one_error(*_run(capsys, tmp_path, api, issuer, **{"refresh-token": ""}))
    assert issuer.seen == [] and "has an expired id-token and no refresh-token to renew it; log in again" in line


def test_an_https_issuer_naming_a_plain_http_token_endpoint_gets_no_refresh_token(capsys, tmp_path, tls):
    with FakeApiServer() as api, Issuer(tls, (200, {}), endpoint="http://127.0.0.1:9/token") as issuer:
        line = _one_error(*_run(capsys, tmp_path, api, issuer, **{"idp-certificate-authority": tls[0]}))
    assert [m for m, *_ in issuer.seen] == ["GET"]
    assert "will not send its refresh token in the clear: the issuer names the token endpoint http://127.0.0.1:9/token" \
        in line
