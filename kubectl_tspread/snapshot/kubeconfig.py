"""Client configuration the way kubectl finds it: kubeconfig files, flags, in-cluster.

Precedence (kubectl's): `--kubeconfig` alone, else every path in `KUBECONFIG`, else
`~/.kube/config`; merged so that the FIRST file defining a cluster, user, context or
`current-context` wins. Relative paths inside a file stay relative to that file.
With no kubeconfig at all and `KUBERNETES_SERVICE_HOST` set, the pod's service account
is used. The `kubernetes` package is imported only here, inside functions, so that
`--help` never pays for it; nothing here prints to stdout or writes to any kubeconfig.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Mapping

from kubectl_tspread.model.errors import ClusterError, InputError, UsageError
from kubectl_tspread.snapshot.kubeconfig_check import (check_cluster, check_context, check_file, check_user,
                                                       host_of, proxy_problem)

SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
DEFAULT_KUBECONFIG = "~/.kube/config"
# a context name no kubeconfig can clash with: the effective context (flags applied) is added under it
_EFFECTIVE = "(tspread: effective context)"


@dataclass
class KubeOptions:
    """What kubectl's global flags carry."""

    kubeconfig: str | None = None
    context: str | None = None
    cluster: str | None = None
    user: str | None = None
    namespace: str | None = None
    all_namespaces: bool = False
    request_timeout: float | None = None  # seconds; None or 0 = no limit beyond the defaults
    as_user: str | None = None
    as_groups: tuple[str, ...] = ()


@dataclass
class ResolvedConfig:
    """A ready `kubernetes.client.Configuration` plus what error messages need to name."""

    configuration: Any
    server: str
    namespace: str
    context: str | None = None
    user: str | None = None
    impersonate_user: str | None = None
    impersonate_groups: tuple[str, ...] = ()
    source: str = ""  # "kubeconfig /a:/b" or "in-cluster service account"


def kubeconfig_paths(opts: KubeOptions, environ: Mapping[str, str]) -> list[str]:
    """The files kubectl would consult, in precedence order (existing or not)."""
    if opts.kubeconfig:
        return [os.path.expanduser(opts.kubeconfig)]
    env = environ.get("KUBECONFIG", "")
    if env:
        return [os.path.expanduser(p) for p in env.split(os.pathsep) if p]
    return [os.path.expanduser(DEFAULT_KUBECONFIG)]


def _read_yaml(path: str) -> dict:
    """The kubeconfig's one document, built without recursion by snapshot/yamlread.py, so a
    file nested past its bound or aliased past its budget is one error, as a dump is."""
    import yaml

    from kubectl_tspread.snapshot import yamlread

    try:
        with open(path, "rb") as f:
            raw = f.read()
        raw.decode("utf-8")
        docs = [(index, value) for _, index, value in yamlread.documents(raw)]
    except OSError as e:
        raise ClusterError(f"cannot read kubeconfig {path}: {e.strerror}; fix its permissions or pass another --kubeconfig") from None
    except UnicodeDecodeError:
        raise InputError(f"kubeconfig {path} is not UTF-8 text; fix it or pass another --kubeconfig") from None
    except yaml.YAMLError as e:
        first = (str(e).splitlines() or ["parse error"])[0]
        raise InputError(f"kubeconfig {path} is not valid YAML ({first}); fix it or pass another "
                         "--kubeconfig") from None
    except yamlread.YamlLimit as e:
        raise InputError(f"kubeconfig {path} cannot be read: {e}; fix it or pass another --kubeconfig") from None
    if any(index is not None for index, _ in docs):  # a sequence at the top, handed over item by item
        raise InputError(f"kubeconfig {path} is not a kubeconfig (top level is not a mapping); fix it or pass another --kubeconfig")
    data = docs[0][1] if docs else None
    if data is None:
        return {}  # kubectl accepts an empty file as an empty config
    if not isinstance(data, dict):
        raise InputError(f"kubeconfig {path} is not a kubeconfig (top level is not a mapping); fix it or pass another --kubeconfig")
    check_file(path, data)
    return data


def merge_kubeconfigs(paths: list[str]) -> Any:
    """Merge files kubectl-style into the ConfigNode tree `KubeConfigLoader` reads.

    Each entry keeps the path of the file it came from, so relative certificate, token
    and exec paths resolve against that file's directory.
    """
    from kubernetes.config.kube_config import ConfigNode

    merged: dict[str, Any] = {"clusters": [], "contexts": [], "users": []}
    seen: dict[str, set[str]] = {k: set() for k in merged}
    for path in paths:
        data = _read_yaml(path)
        if data.get("current-context") and "current-context" not in merged:
            merged["current-context"] = data["current-context"]
        for section in ("clusters", "contexts", "users"):
            for entry in data.get(section) or ():
                name = entry.get("name") if isinstance(entry, dict) else None
                if name is None or name in seen[section]:
                    continue  # first file wins per entry
                seen[section].add(name)
                merged[section].append(ConfigNode(f"{path}/{section}[name={name}]", entry, path))
    return ConfigNode("kubeconfig", merged, paths[0] if paths else None)


def _names(node: Any, section: str) -> list[str]:
    return [e["name"] for e in node.value[section]]


def _find(node: Any, section: str, name: str) -> Any | None:
    for e in node.value[section]:
        if e["name"] == name:
            return e
    return None


def _available(node: Any, section: str) -> str:
    names = _names(node, section)
    return ", ".join(sorted(names)) if names else "none"


def _effective_context(merged: Any, opts: KubeOptions) -> tuple[str | None, dict]:
    """Pick the context and apply --cluster/--user/-n on top; validate every name."""
    ctx_name = opts.context or merged.value.get("current-context")
    ctx: dict = {}
    if ctx_name:
        entry = _find(merged, "contexts", ctx_name)
        if entry is None:
            flag = "--context" if opts.context else "current-context"
            raise ClusterError(f'context "{ctx_name}" ({flag}) does not exist in the kubeconfig; '
                               f"available contexts: {_available(merged, 'contexts')}")
        check_context(entry.path, ctx_name, entry.value.get("context") or {})
        ctx = dict(entry.value.get("context") or {})
    elif not opts.cluster:
        raise ClusterError("the kubeconfig sets no current-context; pass --context NAME "
                           f"(available contexts: {_available(merged, 'contexts')})")
    cluster = opts.cluster or ctx.get("cluster")
    if not cluster or _find(merged, "clusters", cluster) is None:
        what = f'cluster "{cluster}"' if cluster else f'context "{ctx_name}" names no cluster and'
        raise ClusterError(f"{what} is not in the kubeconfig; pass --cluster NAME "
                           f"(available clusters: {_available(merged, 'clusters')})")
    user = opts.user or ctx.get("user")
    if user and _find(merged, "users", user) is None:
        raise ClusterError(f'user "{user}" is not in the kubeconfig; pass --user NAME '
                           f"(available users: {_available(merged, 'users')})")
    effective = {"cluster": cluster, "namespace": opts.namespace or ctx.get("namespace") or "default"}
    if user:
        effective["user"] = user
    return ctx_name, effective


def _first(e: BaseException) -> str:
    return (str(e).splitlines() or [""])[0][:200]


_LOADER: Any = None
# what client-go says to use instead of the auth-providers it dropped
_REMOVED_AUTH_PROVIDERS = {"gcp": "gke-gcloud-auth-plugin", "azure": "kubelogin"}


def _loader_class() -> Any:
    """KubeConfigLoader with exec plugins run by execauth (a time limit, stderr in the error)
    instead of the package's ExecProvider, which waits for a plugin without end. The rest of
    its `_load_from_exec_plugin` is the package's: a token, or a client certificate and key.
    An auth-provider is read as client-go reads one: oidc (the package's reading of the id-token,
    its refresh made by snapshot/oidc.py, the whole within execauth's time limit), gcp and azure
    are refused as removed, any other name is unknown (the package skipped those, and the
    requests went out without credentials)."""
    global _LOADER
    if _LOADER is not None:
        return _LOADER
    from kubernetes.config.dateutil import parse_rfc3339
    from kubernetes.config.kube_config import FileOrData, KubeConfigLoader

    from kubectl_tspread.snapshot.execauth import run_bounded, run_exec_plugin

    class Loader(KubeConfigLoader):
        def _load_auth_provider_token(self):
            if "auth-provider" not in self._user:
                return None
            provider = self._user["auth-provider"]  # its shape: kubeconfig_check.check_user
            name = provider["name"]
            who = f'user "{getattr(self, "tspread_user", None)}"'
            if name in _REMOVED_AUTH_PROVIDERS:
                raise ClusterError(f'the {name} auth-provider of {who} was removed from kubectl (1.26); use the '
                                   f"{_REMOVED_AUTH_PROVIDERS[name]} credential plugin (an exec user) instead")
            if name != "oidc":
                raise ClusterError(f'the auth-provider "{name}" of {who} is none kubectl knows (only oidc); use '
                                   "an exec credential plugin instead")
            token = run_bounded(f"the oidc auth-provider of {who}",
                                lambda: KubeConfigLoader._load_oid_token(self, provider))
            if not token:
                raise ClusterError(f"the oidc auth-provider of {who} has no id-token in the form of a JWT "
                                   "(header.payload.signature); log in again")
            return token

        def _refresh_oidc(self, provider):
            # client-go's refresh (snapshot/oidc.py), not the package's: it leaves the issuer's
            # certificate unchecked without an idp-certificate-authority, and passes over failures
            from kubectl_tspread.snapshot.execauth import EXEC_TIMEOUT
            from kubectl_tspread.snapshot.oidc import refresh

            config = provider["config"].value
            issuer = config.get("idp-issuer-url")
            proxy = environment_proxy(issuer, getattr(self, "tspread_environ", {})) if isinstance(issuer, str) else None
            got = refresh(config, f'user "{getattr(self, "tspread_user", None)}"', proxy,
                          _proxy_credentials(proxy), EXEC_TIMEOUT)
            config["id-token"] = got.id_token
            if got.refresh_token is not None:
                config["refresh-token"] = got.refresh_token

        def _load_from_exec_plugin(self):
            if "exec" not in self._user:
                return None
            base_path = self._get_base_path(self._cluster.path)
            user = getattr(self, "tspread_user", None)
            status = run_exec_plugin(self._user.value["exec"], base_path, self._cluster.value, user)
            if isinstance(status.get("token"), str):
                self.token = "Bearer %s" % status["token"]
            elif all(isinstance(status.get(k), str) for k in ("clientCertificateData", "clientKeyData")):
                files = dict(file_base_path=base_path, base64_file_content=False,
                             temp_file_path=self._temp_file_path)
                self.cert_file = FileOrData(status, None, data_key_name="clientCertificateData", **files).as_file()
                self.key_file = FileOrData(status, None, data_key_name="clientKeyData", **files).as_file()
            else:
                raise ClusterError(f'the auth exec plugin "{self._user.value["exec"].get("command")}" of user '
                                   f'"{user}" returned neither a token nor a client certificate and key; run it by '
                                   "hand to see why, or log in again")
            if status.get("expirationTimestamp"):
                try:
                    self.expiry = parse_rfc3339(status["expirationTimestamp"])
                except (ValueError, TypeError, AttributeError):
                    pass  # no expiry known: the token is used until the server refuses it
            return True

    _LOADER = Loader
    return Loader


def _load_with_loader(merged: Any, ctx_name: str | None, effective: dict, environ: Mapping[str, str]
                      ) -> tuple[Any, Any]:
    from kubernetes.client.configuration import Configuration
    from kubernetes.config.config_exception import ConfigException
    from kubernetes.config.kube_config import ConfigNode

    merged.value["contexts"].append(ConfigNode(_EFFECTIVE, {"name": _EFFECTIVE, "context": effective}, merged.path))
    cfg = Configuration()
    try:
        # config_persister=None: a refreshed token is never written back to the kubeconfig
        loader = _loader_class()(config_dict=merged, active_context=_EFFECTIVE,
                                 config_base_path=None, config_persister=None)
        loader.tspread_user = effective.get("user")  # named in an exec plugin's errors
        loader.tspread_environ = environ  # an oidc issuer's proxy
        loader.load_and_set(cfg)
    except ConfigException as e:
        raise ClusterError(f"kubeconfig context {ctx_name or '(none)'} is unusable: {e}; "
                           "fix the kubeconfig or pick another --context") from None
    except (OSError, ValueError, TypeError, AttributeError, KeyError) as e:
        # what the shape checks above did not foresee, still said as the kubeconfig's fault
        raise ClusterError(f"kubeconfig context {ctx_name or '(none)'} is unusable ({type(e).__name__}: "
                           f"{_first(e)}); fix the kubeconfig or pick another --context") from None
    user = effective.get("user")
    user_entry = (_find(merged, "users", user).value.get("user") or {}) if user else {}
    return cfg, user_entry


def _from_kubeconfig(opts: KubeOptions, paths: list[str], environ: Mapping[str, str]) -> ResolvedConfig:
    merged = merge_kubeconfigs(paths)
    ctx_name, effective = _effective_context(merged, opts)
    cluster_node = _find(merged, "clusters", effective["cluster"])
    if not (cluster_node.value.get("cluster") or {}).get("server"):
        raise ClusterError(f'cluster "{effective["cluster"]}" in the kubeconfig has no server URL; '
                           "fix the kubeconfig or pick another --context")
    check_cluster(cluster_node.path, effective["cluster"], cluster_node.value.get("cluster") or {})
    body = cluster_node.value["cluster"]
    scheme, rest = body["server"].split("://", 1)
    # Go reads a scheme in any case; the loader applies the CA and client certificates only to "https"
    body["server"] = f"{scheme.lower()}://{rest}"
    if effective.get("user"):
        user_node = _find(merged, "users", effective["user"])
        check_user(user_node.path, effective["user"], user_node.value.get("user") or {})
    cfg, user_entry = _load_with_loader(merged, ctx_name, effective, environ)
    cfg.has_proxy_url = bool((cluster_node.value.get("cluster") or {}).get("proxy-url"))
    return ResolvedConfig(
        configuration=cfg, server=cfg.host, namespace=effective["namespace"], context=ctx_name,
        user=effective.get("user"),
        impersonate_user=opts.as_user or user_entry.get("as"),
        impersonate_groups=tuple(opts.as_groups) or tuple(user_entry.get("as-groups") or ()),
        source="kubeconfig " + os.pathsep.join(paths),
    )


def _from_service_account(opts: KubeOptions, environ: Mapping[str, str], sa_dir: str) -> ResolvedConfig:
    from kubernetes.client.configuration import Configuration
    from kubernetes.config.config_exception import ConfigException
    from kubernetes.config.incluster_config import InClusterConfigLoader

    cfg = Configuration()
    try:
        InClusterConfigLoader(os.path.join(sa_dir, "token"), os.path.join(sa_dir, "ca.crt"),
                              environ=dict(environ)).load_and_set(cfg)
    except ConfigException as e:
        raise ClusterError(f"in-cluster config failed ({e}); mount the service account token "
                           f"at {sa_dir} or pass --kubeconfig") from None
    except ValueError:  # the loader's ipaddress check of a host that is no address nor name ('::::')
        cfg.host = ""
    if not host_of(cfg.host or ""):
        # a port past 65535 or a space was 'cannot reach the API server', as for a kubeconfig's server
        where = f"{environ.get('KUBERNETES_SERVICE_HOST', '')}:{environ.get('KUBERNETES_SERVICE_PORT', '')}"
        raise ClusterError(f"in-cluster config failed: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT "
                           f"({where[:80]!r}) are no host and port; fix them or pass --kubeconfig")
    namespace = opts.namespace or environ.get("POD_NAMESPACE") or ""
    if not namespace:
        try:
            with open(os.path.join(sa_dir, "namespace"), encoding="utf-8") as f:
                namespace = f.read().strip()
        except OSError:
            namespace = ""
    return ResolvedConfig(configuration=cfg, server=cfg.host, namespace=namespace or "default",
                          user="service account", impersonate_user=opts.as_user,
                          impersonate_groups=tuple(opts.as_groups), source="in-cluster service account")


def resolve(opts: KubeOptions, *, environ: Mapping[str, str] | None = None,
            service_account_dir: str = SERVICE_ACCOUNT_DIR) -> ResolvedConfig:
    """Find and load the client configuration for `opts`; raise a one-line TspreadError."""
    env = os.environ if environ is None else environ
    if opts.as_groups and not opts.as_user:
        raise UsageError("--as-group needs --as: impersonating groups requires impersonating a user")
    paths = kubeconfig_paths(opts, env)
    if opts.kubeconfig and not os.path.exists(paths[0]):
        raise ClusterError(f"kubeconfig {paths[0]} (--kubeconfig) does not exist; pass an existing file")
    if opts.kubeconfig and not os.path.isfile(paths[0]):
        # a directory, a FIFO or a device: never opened (a FIFO would block), and not "no kubeconfig found"
        raise ClusterError(f"kubeconfig {paths[0]} (--kubeconfig) is not a regular file; pass the file itself")
    odd = [p for p in paths if os.path.exists(p) and not os.path.isfile(p)]
    if odd:  # kubectl fails on it ("error loading config file"): skipped, another context could be chosen
        raise ClusterError(f"kubeconfig {odd[0]} (in KUBECONFIG) is not a regular file; take it out of KUBECONFIG "
                           "or put the file itself there")
    existing = [p for p in paths if os.path.isfile(p)]
    if existing:
        resolved = _from_kubeconfig(opts, existing, env)
    elif env.get("KUBERNETES_SERVICE_HOST"):
        resolved = _from_service_account(opts, env, service_account_dir)
    else:
        raise ClusterError(f"no kubeconfig found (tried {', '.join(paths)}); pass --kubeconfig PATH or "
                           "set KUBECONFIG, or run inside a cluster")
    cfg = resolved.configuration
    cfg.retries = False  # the snapshot layer retries itself (tenacity)
    if not getattr(cfg, "has_proxy_url", False):
        cfg.proxy = environment_proxy(cfg.host, env)
    # a kubeconfig's proxy-url is used for its server whatever NO_PROXY says, as client-go does
    cfg.no_proxy = None
    cfg.proxy_headers = _proxy_credentials(cfg.proxy)
    return resolved


def _proxy_credentials(proxy: str | None) -> dict | None:
    """Proxy-Authorization from a proxy URL's user:password, as Go's transport sends it (urllib3
    leaves the user info of an http(s) proxy unused: the proxy answered 407). A SOCKS proxy
    takes it from the URL itself."""
    from urllib.parse import unquote, urlsplit

    if not proxy or proxy.startswith("socks"):
        return None
    url = urlsplit(proxy)
    if url.username is None:
        return None
    from urllib3.util import make_headers

    return make_headers(proxy_basic_auth=f"{unquote(url.username)}:{unquote(url.password or '')}")


def environment_proxy(server: str, environ: Mapping[str, str]) -> str | None:
    """The proxy client-go takes from the environment for `server` (Go's ProxyFromEnvironment),
    None for none. Read here rather than by the REST client (which asks urllib for os.environ's
    proxies) because the rules differ where it matters: a loopback or `localhost` server is
    never proxied (a local cluster stays reachable with a corporate HTTPS_PROXY set), a proxy
    written without a scheme is an http:// one, ALL_PROXY is not read, the upper-case names come
    first; and a proxy that cannot be used is an error naming the variable, not a LocationParseError
    from inside urllib3 at the first request."""
    import ipaddress
    from urllib.parse import urlsplit

    from kubernetes.client.rest import should_bypass_proxies

    url = urlsplit(server)
    if url.scheme == "https":
        names = ("HTTPS_PROXY", "https_proxy")
    elif environ.get("REQUEST_METHOD"):
        return None  # under CGI, HTTP_PROXY may come from a client's Proxy: header (httpoxy)
    else:
        names = ("HTTP_PROXY", "http_proxy")
    name = next((n for n in names if environ.get(n)), None)
    if name is None:
        return None
    host = (url.hostname or "").lower()
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = host == "localhost"
    no_proxy = environ.get("NO_PROXY") or environ.get("no_proxy") or ""
    if loopback or should_bypass_proxies(server, no_proxy):
        return None
    written = environ[name].strip()
    proxy = written if "://" in written else "http://" + written
    problem = proxy_problem(proxy)
    if problem is not None and proxy != written:
        problem = proxy_problem(written)  # said of the value as written
    if problem is not None:
        fix = ("pip install pysocks, or use an http(s) proxy" if "PySocks" in problem else
               f"fix {name} or unset it (or add the server's host to NO_PROXY)")
        raise ClusterError(f"the environment's {name} {problem}; {fix}")
    return proxy
