"""The baseline a user would otherwise write: every pod through the `kubernetes` client's typed API.

`list_pod_for_all_namespaces` in pages of 500, each page deserialized into V1Pod model
objects (that is where the client spends its time), counted and dropped.

    python -m bench.baseline_client KUBECONFIG
"""

from __future__ import annotations

import sys


def list_all_pods(kubeconfig: str, limit: int = 500) -> int:
    from kubernetes import client, config

    config.load_kube_config(config_file=kubeconfig)
    api = client.CoreV1Api()
    count, token = 0, None
    while True:
        page = api.list_pod_for_all_namespaces(limit=limit, _continue=token)
        count += len(page.items)
        token = page.metadata._continue
        del page
        if not token:
            return count


def main() -> None:
    print(list_all_pods(sys.argv[1]))


if __name__ == "__main__":
    main()
