"""What a kubeconfig must look like before the `kubernetes` loader reads it.

The loader trusts its input: `clusters: 5`, a context that is a string, `server: 12345`, a
missing `tokenFile` or `certificate-authority-data` that is not base64 each ended in a
TypeError, AttributeError, FileNotFoundError or binascii.Error from deep inside it. Here
each is one error naming the file, the entry and the field, and what to do. The lists'
shapes are checked in every file read (kubectl refuses such a file as a whole); the
fields, in the entries the effective context uses.
"""

from __future__ import annotations

import base64
import binascii
import os
from typing import Any

from kubectl_tspread.model.errors import InputError

SECTIONS = {"clusters": "cluster", "contexts": "context", "users": "user"}
_FIX = "fix the kubeconfig or pass another --kubeconfig"


def _type(value: Any) -> str:
    if value is None:
        return "empty"
    if isinstance(value, bool):
        return f"a boolean ({str(value).lower()})"
    if isinstance(value, (int, float)):
        return f"a number ({value})"
    if isinstance(value, str):
        return f"a string ({value[:30]!r})"
    return "a list" if isinstance(value, list) else f"a {type(value).__name__}"


def _bad(path: str, field: str, value: Any, expected: str) -> InputError:
    return InputError(f"kubeconfig {path}: {field} is {_type(value)}, not {expected}; {_FIX}")


def check_file(path: str, data: dict) -> None:
    """The top level of one kubeconfig file: lists of named mappings, a string current-context."""
    current = data.get("current-context")
    if current is not None and not isinstance(current, str):
        raise _bad(path, "current-context", current, "a context name")
    for section, body_key in SECTIONS.items():
        entries = data.get(section)
        if entries is None:
            continue
        if not isinstance(entries, list):
            raise _bad(path, section, entries, f"a list of {section}")
        first: dict[str, int] = {}
        for i, entry in enumerate(entries):
            where = f"{section}[{i}]"
            if not isinstance(entry, dict):
                raise _bad(path, where, entry, f"a mapping with a name and a {body_key}")
            name = entry.get("name")
            if not isinstance(name, str):
                raise _bad(path, f"{where}.name", name, "a string")
            if name in first:
                # client-go refuses the file ("duplicate name … in list"); across files the first wins
                raise InputError(f"kubeconfig {path}: {section}[{first[name]}] and {where} are both named "
                                 f"{name!r}, and kubectl refuses such a file; remove or rename one")
            first[name] = i
            body = entry.get(body_key)
            if body is not None and not isinstance(body, dict):
                raise _bad(path, f'{section[:-1]} "{name}": {body_key}', body, "a mapping")


def check_cluster(path: str, name: str, body: dict) -> None:
    where = f'cluster "{name}"'
    server = body.get("server")
    if not isinstance(server, str) or not server.strip():
        raise _bad(path, f"{where}: server", server, "a URL such as https://host:6443")
    if not server.lower().startswith(("http://", "https://")) or not host_of(server):  # Go: any case
        # a port past 65535, a space in the host or no host at all was 'cannot reach the API server'
        raise InputError(f"kubeconfig {path}: {where}: server {server[:60]!r} is not an http(s) URL "
                         f"(e.g. https://host:6443); {_FIX}")
    for key in ("certificate-authority", "tls-server-name", "proxy-url"):
        _string(path, where, body, key)
    _base64(path, where, body, "certificate-authority-data")
    _file(path, where, body, "certificate-authority")
    _bool(path, where, body, "insecure-skip-tls-verify")
    _proxy(path, where, body.get("proxy-url"))


def check_user(path: str, name: str, body: dict) -> None:
    where = f'user "{name}"'
    for key in ("token", "tokenFile", "client-certificate", "client-key", "username", "password", "as"):
        _string(path, where, body, key)
    for key in ("client-certificate-data", "client-key-data"):
        _base64(path, where, body, key)
    for key in ("client-certificate", "client-key"):
        _file(path, where, body, key)
    for key in ("username", "password"):
        # the loader encodes basic auth as Latin-1 (a UnicodeEncodeError from inside it before)
        if isinstance(body.get(key), str) and not header_safe(body[key]):
            raise InputError(f"kubeconfig {path}: {where}: {key} holds a line break or a character beyond "
                             f"Latin-1, which basic auth cannot send here; {_FIX}")
    groups = body.get("as-groups")
    if groups is not None and not (isinstance(groups, list) and all(isinstance(g, str) for g in groups)):
        raise _bad(path, f"{where}: as-groups", groups, "a list of strings")
    if body.get("token") is None and body.get("tokenFile") is not None:
        token_file = os.path.join(os.path.dirname(os.path.abspath(path)), os.path.expanduser(body["tokenFile"]))
        if not os.path.isfile(token_file) or not os.access(token_file, os.R_OK):
            raise InputError(f"kubeconfig {path}: {where}: tokenFile {token_file} "
                             f"{'is not a readable file' if os.path.exists(token_file) else 'does not exist'}; "
                             "point it at the token, or log in again")
    if "exec" in body:
        _exec(path, where, body["exec"])
    if "auth-provider" in body:
        _auth_provider(path, where, body["auth-provider"])


def _auth_provider(path: str, where: str, provider: Any) -> None:
    if not isinstance(provider, dict):
        raise _bad(path, f"{where}: auth-provider", provider, "a mapping with a name and a config")
    if not isinstance(provider.get("name"), str) or not provider.get("name"):
        raise _bad(path, f"{where}: auth-provider.name", provider.get("name"), "a string")
    config = provider.get("config")
    if config is not None and not (isinstance(config, dict) and all(isinstance(v, str) for v in config.values())):
        raise _bad(path, f"{where}: auth-provider.config", config, "a mapping of strings")


def check_context(path: str, name: str, body: dict) -> None:
    for key in ("cluster", "user", "namespace"):
        _string(path, f'context "{name}"', body, key)


def _exec(path: str, where: str, config: Any) -> None:
    if not isinstance(config, dict):
        raise _bad(path, f"{where}: exec", config, "a mapping with command and apiVersion")
    for key in ("command", "apiVersion"):
        if not isinstance(config.get(key), str) or not config.get(key):
            raise _bad(path, f"{where}: exec.{key}", config.get(key), "a string")
    args = config.get("args")
    if args is not None and not (isinstance(args, list) and all(isinstance(a, str) for a in args)):
        raise _bad(path, f"{where}: exec.args", args, "a list of strings")
    env = config.get("env")
    if env is not None and not (isinstance(env, list) and all(
            isinstance(e, dict) and isinstance(e.get("name"), str) and isinstance(e.get("value"), str)
            for e in env)):
        raise _bad(path, f"{where}: exec.env", env, "a list of {name, value} strings")
    # a NUL cannot reach a process's argv or environment (ValueError from inside subprocess)
    texts = [("exec.command", config["command"]), *(("exec.args", a) for a in args or ()),
             *(("exec.env", t) for e in env or () for t in (e["name"], e["value"]))]
    for field, text in texts:
        if "\0" in text:
            raise InputError(f"kubeconfig {path}: {where}: {field} holds a NUL character, which no command line "
                             f"or environment can carry; {_FIX}")


def host_of(server: str) -> str | None:
    """The host of a server URL; None when no client could connect to it (a bad port, a space, none)."""
    from urllib3.util import parse_url

    try:
        return parse_url(server).host
    except ValueError:  # LocationParseError: a bad port, a space, ...
        return None


def _file(path: str, where: str, body: dict, key: str) -> None:
    """A certificate or key file (`key`), unless its -data twin is given (which the loader prefers):
    an existing readable file, resolved against the kubeconfig's directory as the loader does
    (it said 'File does not exist' of a directory)."""
    name = body.get(key)
    if not isinstance(name, str) or not name or body.get(f"{key}-data"):
        return
    full = os.path.join(os.path.dirname(os.path.abspath(path)), os.path.expanduser(name))
    if not os.path.isfile(full) or not os.access(full, os.R_OK):
        what = "is not a readable file" if os.path.exists(full) else "does not exist"
        raise InputError(f"kubeconfig {path}: {where}: {key} {full} {what}; point it at the PEM file, or "
                         f"use {key}-data; {_FIX}")


def _string(path: str, where: str, body: dict, key: str) -> None:
    value = body.get(key)
    if value is not None and not isinstance(value, str):
        raise _bad(path, f"{where}: {key}", value, "a string")


_PROXY_SCHEMES = ("http", "https", "socks4", "socks4a", "socks5", "socks5h")


def _proxy(path: str, where: str, proxy: str | None) -> None:
    if not proxy:
        return
    problem = proxy_problem(proxy)
    if problem is not None:
        raise InputError(f"kubeconfig {path}: {where}: proxy-url {problem}; "
                         + (_FIX if "PySocks" not in problem else "pip install pysocks, or use an http(s) proxy"))


def proxy_problem(proxy: str) -> str | None:
    """What keeps the REST client from using `proxy` (a kubeconfig's proxy-url, or HTTPS_PROXY),
    in words that follow its quoted value; None when it can: urllib3 raises LocationParseError on
    `::` when the first request is made, and a SOCKS proxy needs PySocks, which is not among our
    dependencies."""
    import importlib.util

    from urllib3.util import parse_url

    try:
        url = parse_url(proxy)
    except ValueError:  # urllib3's LocationParseError
        url = None
    if url is None or url.scheme not in _PROXY_SCHEMES or not url.host:
        return f"{proxy[:60]!r} is not a proxy URL (http://, https:// or socks5://host:port)"
    if url.scheme.startswith("socks") and importlib.util.find_spec("socks") is None:
        return f"{proxy[:60]!r} is a SOCKS proxy, which needs the PySocks package"
    return None


def _bool(path: str, where: str, body: dict, key: str) -> None:
    value = body.get(key)
    if value is not None and not isinstance(value, bool):
        raise _bad(path, f"{where}: {key}", value, "true or false")


def _base64(path: str, where: str, body: dict, key: str) -> None:
    value = body.get(key)
    if value is None:
        return
    if not isinstance(value, str):
        raise _bad(path, f"{where}: {key}", value, "base64 text")
    try:
        base64.standard_b64decode(value)  # what the loader decodes it with
    except (binascii.Error, ValueError):
        raise InputError(f"kubeconfig {path}: {where}: {key} is not base64 (it should hold a PEM file "
                         f"encoded with `base64 -w0`); {_FIX}") from None


def header_safe(value: str) -> bool:
    """Whether `value` can be sent as an HTTP header value: Latin-1, no CR, LF or NUL."""
    try:
        value.encode("latin-1")
    except UnicodeEncodeError:
        return False
    return not any(c in value for c in "\r\n\0")
