"""Transport configurations compared by the NCCL tooling, as data.

Each configuration is a name and the environment variables that select it.  Two
placeholders stand for values known only at run time:

  PLUGIN       replaced by the absolute path of libnccl-net-tcpxr.so
  FROM_CALLER  copied from the caller's environment; the configuration is
               skipped (with a message saying which variable to set) if unset

The expected network (what NCCL must log in "Using network X" / "via NET/X") is
the value of NCCL_NET, and NCCL_NET_GDR_LEVEL says whether NCCL must hand GPU
buffers to the net ("SYS": "/GDRDMA" required) or host buffers ("LOC": none).
"""

import os

PLUGIN_FILE = "libnccl-net-tcpxr.so"
PLUGIN = "{plugin}"
FROM_CALLER = None

# Always set, on every host and in every configuration.
COMMON_ENV = {"NCCL_NVLS_ENABLE": "0"}

# Single host: push the traffic between the GPUs of one machine onto the network.
SINGLE_HOST_ENV = {
    "NCCL_P2P_DISABLE": "1",
    "NCCL_SHM_DISABLE": "1",
    "NCCL_SOCKET_IFNAME": "lo",
}

_SOCKET = {"NCCL_NET": "Socket", "NCCL_NET_PLUGIN": "none"}
# NCCL_TCPXR_STATS=1: each connection logs its counters when it closes; the runner summarises
# them beside each tcpxr figure. They time every socket call and hand-off (two clock reads and an
# atomic add each), which cost nothing measurable: 4 ranks one per GPU, all_gather and all_reduce
# of 16-512 MiB within the spread with and without (run 255, docs/BENCHMARKS.md).
_TCPXR = {"NCCL_NET": "tcpxr", "NCCL_NET_PLUGIN": PLUGIN, "NCCL_TCPXR_STATS": "1"}

CONFIGS = {
    "socket": dict(_SOCKET),
    # NCCL Socket's tunings: which is best depends on the machine (on one H200 with 16 cores 2x2 won
    # at 512 MiB), so the runner compares tcpxr with the best of them at every size.
    "socket-1x1": dict(_SOCKET, NCCL_NSOCKS_PERTHREAD="1", NCCL_SOCKET_NTHREADS="1"),
    "socket-2x2": dict(_SOCKET, NCCL_NSOCKS_PERTHREAD="2", NCCL_SOCKET_NTHREADS="2"),
    "socket-4x4": dict(_SOCKET, NCCL_NSOCKS_PERTHREAD="4", NCCL_SOCKET_NTHREADS="4"),
    # The socket rows name their inner transport: with NCCL_TCPXR_TCPX_LIB in the caller's
    # environment (for the tcpx row), "auto" would take TCPX for them too.
    "tcpxr-host": dict(_TCPXR, NCCL_NET_GDR_LEVEL="LOC", NCCL_TCPXR_TRANSPORT="socket"),
    # Over socket tcpxr offers GPU buffers when asked (NCCL_TCPXR_GPU_BUFFERS=1), and NCCL hands them only when
    # NCCL_NET_GDR_LEVEL allows it for lo.
    "tcpxr-gpu": dict(_TCPXR, NCCL_NET_GDR_LEVEL="SYS", NCCL_TCPXR_GPU_BUFFERS="1", NCCL_TCPXR_TRANSPORT="socket"),
    "tcpxr-tcpx": dict(_TCPXR, NCCL_NET_GDR_LEVEL="SYS", NCCL_TCPXR_GPU_BUFFERS="1", NCCL_TCPXR_TRANSPORT="tcpx",
                       NCCL_TCPXR_TCPX_LIB=FROM_CALLER),
}

DESCRIPTIONS = {
    "socket": "NCCL's own TCP transport, default tuning (NCCL_NET=Socket)",
    "socket-1x1": "NCCL Socket, 1 helper thread x 1 socket (NCCL_SOCKET_NTHREADS=1 NCCL_NSOCKS_PERTHREAD=1)",
    "socket-2x2": "NCCL Socket, 2 helper threads x 2 sockets each",
    "socket-4x4": "NCCL Socket, 4 helper threads x 4 sockets each",
    "tcpxr-host": "tcpxr, socket inner transport, host buffers (GDR off)",
    "tcpxr-gpu": "tcpxr, socket inner transport, GPU buffers (NCCL_TCPXR_GPU_BUFFERS=1 NCCL_NET_GDR_LEVEL=SYS)",
    "tcpxr-tcpx": "tcpxr over Google's GPUDirect-TCPX library (NCCL_TCPXR_TCPX_LIB)",
}

# GPU buffers through NCCL's device unpack (NCCL_NET_DEVICE_UNPACK v7): NCCL's own kernel copies
# received data out of the plugin's bounce buffers (or, over socket on point-to-point connections,
# the copy engine has put it in place), so no kernel of the plugin stands between NCCL's kernel and
# its data (issue 13). The log must show NCCL using it.
DEVICE_UNPACK = ("tcpxr-gpu", "tcpxr-tcpx")

DEFAULT_CONFIGS = ["socket", "socket-1x1", "socket-2x2", "socket-4x4", "tcpxr-host", "tcpxr-gpu"]


class ConfigUnavailable(Exception):
    """The configuration cannot run here (e.g. a variable it needs is unset)."""


def add_variants(names, specs):
    """Registers the variants among `names`: a name BASE+LABEL is configuration BASE with the
    variables --variant gave LABEL ("LABEL:KEY=VALUE", repeatable, one variable each), so that
    settings compare side by side in one call (alternated with --repeat, tabled as configs).
    Returns `names`; raises ValueError naming what is wrong."""
    labels = {}
    for spec in specs:
        label, colon, kv = spec.partition(":")
        key, eq, value = kv.partition("=")
        if not colon or not eq or not key or not label or "+" in label:
            raise ValueError(f"--variant {spec!r}: use LABEL:KEY=VALUE (one variable each; repeat it)")
        labels.setdefault(label, {})[key] = value
    for name in names:
        base, plus, label = name.partition("+")
        if not plus or name in CONFIGS:
            continue
        if base not in CONFIGS or "+" in base:
            raise ValueError(f"config {name!r}: {base!r} is not a configuration; known: {', '.join(CONFIGS)}")
        if label not in labels:
            raise ValueError(f"config {name!r}: no --variant {label}:KEY=VALUE gives {label!r} its settings")
        CONFIGS[name] = dict(CONFIGS[base], **labels[label])
        DESCRIPTIONS[name] = DESCRIPTIONS[base] + ", with " + " ".join(f"{k}={v}" for k, v in labels[label].items())
    unused = sorted(set(labels) - {n.partition("+")[2] for n in names})
    if unused:
        raise ValueError(f"--variant {unused[0]} is not used by any config (name one BASE+{unused[0]})")
    return names


def base_of(name):
    """The configuration a variant (BASE+LABEL) is built on; a plain name is its own."""
    return name.partition("+")[0]


def expected_net(name):
    """Network name NCCL must report for this configuration ("Socket", "tcpxr")."""
    return CONFIGS[name]["NCCL_NET"]


def expected_gdr(name):
    """True: GPU buffers required; False: host buffers required; None: not checked."""
    return {"SYS": True, "LOC": False}.get(CONFIGS[name].get("NCCL_NET_GDR_LEVEL"))


def expected_device_unpack(name):
    """True: NCCL must log that it uses the plugin's device unpack; None: not checked."""
    return True if base_of(name) in DEVICE_UNPACK else None


def expectations(name):
    """What the NCCL log of a run of `name` must show, as parse.check_transport's arguments."""
    return {"expected": expected_net(name), "gdr": expected_gdr(name), "device_unpack": expected_device_unpack(name)}


def uses_plugin(name):
    return CONFIGS[name].get("NCCL_NET_PLUGIN") == PLUGIN


def plugin_path(plugin_dir):
    return os.path.join(os.path.abspath(plugin_dir), PLUGIN_FILE)


def check_names(names):
    unknown = [n for n in names if n not in CONFIGS]
    if unknown:
        raise ValueError(f"unknown config(s) {', '.join(unknown)}; known: {', '.join(CONFIGS)}")
    return names


# Collectives with no tree in NCCL: forced to the tree alone, NCCL refuses them (ncclInvalidUsage,
# "no algorithm/protocol available", run 318). Point-to-point operations take no algorithm.
NO_TREE_OPS = ("all_gather", "reduce_scatter", "broadcast", "reduce")


def tree_refusal(nccl_algo, ops, option):
    """Why a tool refuses `ops` (given as `option`) where NCCL_ALGO=nccl_algo allows the tree alone
    ("Tree", any case) and some of them have no tree; None where none does, or where NCCL_ALGO
    allows more, excludes some (^...) or names collectives (NCCL's per-collective syntax)."""
    if not nccl_algo or ":" in nccl_algo or nccl_algo.startswith("^"):
        return None
    if {x.strip().lower() for x in nccl_algo.split(",")} != {"tree"}:
        return None
    treeless = [op for op in ops if op in NO_TREE_OPS]
    if not treeless:
        return None
    return (f"NCCL_ALGO={nccl_algo}: NCCL has a tree for all_reduce only and refuses {', '.join(treeless)} "
            f"with ncclInvalidUsage (no algorithm available); leave them out of {option}, or allow another "
            f"algorithm (e.g. Tree,Ring)")


def parse_env(pairs):
    """--env KEY=VALUE arguments -> {KEY: VALUE}."""
    out = {}
    for kv in pairs:
        key, eq, value = kv.partition("=")
        if not eq or not key:
            raise ValueError(f"--env {kv!r}: use KEY=VALUE")
        out[key] = value
    return out


def overrides(name, plugin_dir, log_path, *, single_host=True, base_env=None, extra=None):
    """The variables a run of `name` sets on top of the caller's environment.

    log_path: NCCL_DEBUG_FILE prefix; NCCL writes <log_path>.<host>.<pid>.
    extra: user variables (--env), applied after the configuration.
    Raises ConfigUnavailable when a FROM_CALLER variable is unset.
    """
    base_env = os.environ if base_env is None else base_env
    env = dict(COMMON_ENV)
    if single_host:
        env.update(SINGLE_HOST_ENV)
    for key, value in CONFIGS[name].items():
        if value is FROM_CALLER:
            value = base_env.get(key)
            if not value:
                raise ConfigUnavailable(f"{name} skipped: set {key} in your environment to run it")
        elif value == PLUGIN:
            value = plugin_path(plugin_dir)
        env[key] = value
    if uses_plugin(name):
        lib_dirs = [os.path.abspath(plugin_dir)] + [p for p in base_env.get("LD_LIBRARY_PATH", "").split(":") if p]
        env["LD_LIBRARY_PATH"] = ":".join(lib_dirs)
    env.update(extra or {})
    if env.get("NCCL_NVLS_ENABLE") != "0":
        raise ValueError("NCCL_NVLS_ENABLE must stay 0")
    # INIT,NET say which network ran (the checks read them); --env NCCL_DEBUG_SUBSYS adds to them
    # (TUNING: NCCL's algorithm, protocol and channels per size).
    wanted = ["INIT", "NET"] + [s.strip() for s in (extra or {}).get("NCCL_DEBUG_SUBSYS", "").split(",") if s.strip()]
    env.update(NCCL_DEBUG="INFO", NCCL_DEBUG_SUBSYS=",".join(dict.fromkeys(wanted)),
               NCCL_DEBUG_FILE=os.path.abspath(log_path) + ".%h.%p")
    return env


def build_env(name, plugin_dir, log_path, *, single_host=True, base_env=None, extra=None):
    """Full environment of one run: caller's environment + overrides()."""
    base_env = dict(os.environ if base_env is None else base_env)
    base_env.update(overrides(name, plugin_dir, log_path, single_host=single_host,
                              base_env=base_env, extra=extra))
    return base_env


def inherited_nccl_vars(names, plugin_dir, base_env=None, *, single_host=True, extra=None):
    """NCCL_* variables of the caller's environment that no configuration sets:
    they apply to every configuration alike, so the runner lists them."""
    base_env = os.environ if base_env is None else base_env
    ours = set(COMMON_ENV) | set(SINGLE_HOST_ENV if single_host else {}) | set(extra or {})
    ours |= {"NCCL_DEBUG", "NCCL_DEBUG_SUBSYS", "NCCL_DEBUG_FILE"}
    for n in names:
        ours |= set(CONFIGS[n])
    return {k: v for k, v in sorted(base_env.items()) if k.startswith("NCCL_") and k not in ours}
