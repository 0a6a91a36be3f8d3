"""The oidc auth-provider's token refresh, made as client-go's oidc plugin makes it.

The `kubernetes` package refreshes an expired id-token with the issuer's TLS certificate
unchecked when the kubeconfig names no idp-certificate-authority, so whoever answers for the
issuer chooses the token endpoint the refresh token and client secret are then sent to; and
a discovery or refresh that fails is passed over in silence (the expired token goes out, and
the API server's 401 hides why). Here, as in client-go:
- the issuer is verified against idp-certificate-authority(-data) when given, else the
  system's roots (and certifi's, which the package uses for API servers: a Python without a
  system store would otherwise refuse every issuer);
- `<idp-issuer-url>/.well-known/openid-configuration` names the token endpoint;
- the refresh is an RFC 6749 refresh_token grant, with the client credentials in a Basic
  header and, when the endpoint refuses that, in the form (golang.org/x/oauth2's auto-detected
  auth style); of two refusals the one not about the client is reported;
- an https issuer's token endpoint must be https too (the refresh token is never sent in the
  clear), and the answer must carry an `id_token`; a new `refresh_token` replaces the old one;
- the proxy is the environment's, read as for the API server (kubeconfig.environment_proxy).
Every failure is one ClusterError saying what to do. Each request has the credential time
limit, and the answers are read up to MAX_ANSWER bytes.
"""

from __future__ import annotations

import base64
import json
import ssl
from dataclasses import dataclass
from typing import Any, Mapping
from urllib.parse import quote_plus, urlencode, urlsplit

from kubectl_tspread.model.errors import ClusterError

# a discovery document or token answer is a few KB; a bigger one is not an issuer's
MAX_ANSWER = 1 << 20
DISCOVERY = "/.well-known/openid-configuration"


@dataclass(frozen=True)
class Refreshed:
    id_token: str
    refresh_token: str | None  # None: the issuer kept the old one


def refresh(config: Mapping[str, Any], who: str, proxy: str | None, proxy_headers: dict | None,
            timeout: float) -> Refreshed:
    """A new id-token for the oidc `config` (the auth-provider's config map) of `who`
    ('user "u"'), through `proxy` (None: direct) with `proxy_headers`."""
    what = f"the oidc auth-provider of {who}"
    issuer, refresh_token = config.get("idp-issuer-url"), config.get("refresh-token")
    if not isinstance(refresh_token, str) or not refresh_token:
        raise ClusterError(f"{what} has an expired id-token and no refresh-token to renew it; log in again")
    if not isinstance(issuer, str) or urlsplit(issuer).scheme not in ("http", "https") or not urlsplit(issuer).hostname:
        raise ClusterError(f"{what} has no usable idp-issuer-url ({issuer!r}) to renew its expired id-token; "
                           "fix it in the kubeconfig or log in again")
    http = _pool(config, what, proxy, proxy_headers, timeout)
    found = issuer.rstrip("/") + DISCOVERY
    status, doc = _ask(http, what, "GET", found, None, {})
    endpoint = doc.get("token_endpoint") if status == 200 else None
    if not isinstance(endpoint, str) or urlsplit(endpoint).scheme not in ("http", "https"):
        said = f"answered {status}" if status != 200 else "names no token_endpoint"
        raise ClusterError(f"{what} cannot renew its expired id-token: {found} {said}; check idp-issuer-url, "
                           "or log in again")
    if urlsplit(issuer).scheme == "https" and urlsplit(endpoint).scheme != "https":
        raise ClusterError(f"{what} will not send its refresh token in the clear: the issuer names the token "
                           f"endpoint {endpoint}; fix the issuer's configuration, or log in again")
    client_id, secret = str(config.get("client-id") or ""), str(config.get("client-secret") or "")
    form = {"grant_type": "refresh_token", "refresh_token": refresh_token}
    # RFC 6749 2.3.1: each part form-encoded before the Basic header's base64 (as Go's QueryEscape)
    basic = base64.b64encode(f"{quote_plus(client_id)}:{quote_plus(secret)}".encode()).decode()
    status, answer = _ask(http, what, "POST", endpoint, form, {"Authorization": "Basic " + basic})
    if status in (400, 401):  # an endpoint that wants the client in the form (client_secret_post)
        again = _ask(http, what, "POST", endpoint, {**form, "client_id": client_id, "client_secret": secret}, {})
        # the refusal that says more: the form's, unless the endpoint only refused the client there
        if again[0] == 200 or again[1].get("error") != "invalid_client":
            status, answer = again
    if status != 200:
        reason = " ".join(str(answer.get(k)) for k in ("error", "error_description") if isinstance(answer.get(k), str))
        raise ClusterError(f"{what} could not renew its expired id-token: the token endpoint answered {status}"
                           f"{': ' + reason[:200] if reason else ''}; log in again")
    id_token = answer.get("id_token")
    if not isinstance(id_token, str) or not id_token:
        raise ClusterError(f"{what} could not renew its expired id-token: the token endpoint's answer holds no "
                           "id_token; check the issuer's client settings, or log in again")
    new_refresh = answer.get("refresh_token")
    return Refreshed(id_token, new_refresh if isinstance(new_refresh, str) and new_refresh else None)


def _pool(config: Mapping[str, Any], what: str, proxy: str | None, proxy_headers: dict | None,
          timeout: float) -> Any:
    import urllib3

    try:
        context = ssl.create_default_context()
        data, path = config.get("idp-certificate-authority-data"), config.get("idp-certificate-authority")
        if data:
            context.load_verify_locations(cadata=base64.b64decode(str(data), validate=True).decode("ascii"))
        elif path:
            context.load_verify_locations(cafile=str(path))
        else:
            import certifi

            context.load_verify_locations(cafile=certifi.where())
    except (ValueError, OSError, ssl.SSLError) as e:
        raise ClusterError(f"{what} has an idp-certificate-authority that cannot be used ({type(e).__name__}: "
                           f"{' '.join(str(e).split())[:200]}); fix it in the kubeconfig") from None
    kw = dict(ssl_context=context, timeout=urllib3.Timeout(connect=timeout, read=timeout), retries=False)
    if proxy:
        return urllib3.ProxyManager(proxy, proxy_headers=proxy_headers, **kw)
    return urllib3.PoolManager(**kw)


def _ask(http: Any, what: str, method: str, url: str, form: dict | None, headers: dict) -> tuple[int, dict]:
    """(status, the JSON object answered, {} when it is none)."""
    import urllib3

    headers = {"Accept": "application/json", **headers}
    body = None
    if form is not None:
        body = urlencode(form).encode()
        headers["Content-Type"] = "application/x-www-form-urlencoded"
    try:
        resp = http.request(method, url, body=body, headers=headers, preload_content=False, redirect=False)
        try:
            data = resp.read(MAX_ANSWER + 1)
        finally:
            resp.release_conn()
    except urllib3.exceptions.SSLError as e:
        raise ClusterError(f"{what} cannot renew its expired id-token: {url} failed TLS verification "
                           f"({' '.join(str(e).split())[:200]}); set idp-certificate-authority in the kubeconfig "
                           "if the issuer uses a private CA") from None
    except (urllib3.exceptions.HTTPError, OSError) as e:
        raise ClusterError(f"{what} cannot renew its expired id-token: {method} {url} failed "
                           f"({type(e).__name__}); check idp-issuer-url and your network, or log in again") from None
    if len(data) > MAX_ANSWER:
        raise ClusterError(f"{what} cannot renew its expired id-token: {url} answered more than "
                           f"{MAX_ANSWER} bytes; check idp-issuer-url")
    try:
        doc = json.loads(data) if data else {}
    except (ValueError, RecursionError):
        doc = {}
    return resp.status, doc if isinstance(doc, dict) else {}
