"""What this machine can do for kernel TLS, and what really ran.

Why this exists: asking nginx for kTLS (``ssl_conf_command Options KTLS;``) is accepted by
nginx and OpenSSL even where the kernel cannot do it; OpenSSL then silently encrypts in user
space and the "kTLS" numbers are user-space TLS numbers. So a result is labelled by evidence,
never by the request:

* :func:`detect_ktls` -- the kernel's ``tls`` ULP (probed with a real ``setsockopt``),
  ``/proc/net/tls_stat``, NICs with ``tls-hw-tx/rx-offload`` (``ethtool -k``), nginx's version
  and OpenSSL, and whether that OpenSSL was built with kTLS. Each finding carries its reason.
* :func:`verify_mode` -- from ``tls_stat`` counter deltas around the requests (``TlsTxSw``:
  sockets the kernel encrypted in software; ``TlsTxDevice``: sockets the NIC encrypted) and
  nginx's access log (``$ssl_protocol``), one sentence saying what ran. kTLS is never claimed
  without a counter that rose.
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import socket
import subprocess
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Mapping, Optional, Sequence

from cryptoffload.apps.tls.nginx import NGINX_BINARY, AccessEntry, check_mode
from cryptoffload.checks import JsonDict, JsonValue

TLS_STAT_PATH = Path("/proc/net/tls_stat")
AVAILABLE_ULP_PATH = Path("/proc/sys/net/ipv4/tcp_available_ulp")
SYS_CLASS_NET = Path("/sys/class/net")
#: ethtool lives in /usr/sbin, which a user's PATH may lack.
ETHTOOL_PATHS: tuple[str, ...] = ("/usr/sbin/ethtool", "/sbin/ethtool")
TCP_ULP = 31  # from <linux/tcp.h>; Python's socket module does not export it
OPENSSL_CONFIGURATION_H = (Path("/usr/include/x86_64-linux-gnu/openssl/configuration.h"),
                           Path("/usr/include/aarch64-linux-gnu/openssl/configuration.h"),
                           Path("/usr/include/openssl/configuration.h"))
NO_TLS_ULP = "no tls ULP in this kernel"


@dataclass
class Finding:
    """One fact about the machine: ``value`` (None: could not be known) and why we think so."""

    value: JsonValue
    reason: str


@dataclass
class KtlsSupport:
    """Everything :func:`detect_ktls` found; each field is a :class:`Finding`."""

    tls_ulp: Finding
    tls_stat: Finding
    nic_tx_offload: Finding
    nic_rx_offload: Finding
    nginx: Finding
    nginx_openssl: Finding
    openssl_ktls: Finding
    nginx_ktls: Finding
    nic_features: dict[str, dict[str, str]] = field(default_factory=dict)

    @property
    def kernel_ktls(self) -> bool:
        """True only when the kernel's tls ULP is known to be there."""
        return self.tls_ulp.value is True

    def fallback_reason(self) -> Optional[str]:
        """Why a kTLS request would end in user-space TLS here (None: nothing known prevents it)."""
        if self.tls_ulp.value is False:
            return NO_TLS_ULP
        if self.openssl_ktls.value is False:
            return "OpenSSL built without kTLS"
        if self.nginx_ktls.value is False:
            return self.nginx_ktls.reason
        return None

    def rows(self) -> list[tuple[str, str, str]]:
        """(what, value, reason) rows for the ``tls detect`` table."""
        def show(v: JsonValue) -> str:
            if v is None:
                return "unknown"
            if isinstance(v, bool):
                return "yes" if v else "no"
            if isinstance(v, (list, tuple)):
                return ", ".join(map(str, v)) if v else "none"
            if isinstance(v, dict):
                return ", ".join(f"{k}={n}" for k, n in v.items()) if v else "absent"
            return str(v)
        names = [("kernel tls ULP", self.tls_ulp), ("/proc/net/tls_stat", self.tls_stat),
                 ("NIC tls-hw-tx-offload", self.nic_tx_offload), ("NIC tls-hw-rx-offload", self.nic_rx_offload),
                 ("nginx", self.nginx), ("nginx's OpenSSL", self.nginx_openssl),
                 ("OpenSSL built with kTLS", self.openssl_ktls), ("nginx can use kTLS", self.nginx_ktls)]
        return [(n, show(f.value), f.reason) for n, f in names]

    def to_dict(self) -> JsonDict:
        return asdict(self)


# ---- kernel ----------------------------------------------------------------------------------
def read_tls_stat(path: Path = TLS_STAT_PATH) -> dict[str, int]:
    """The kernel's kTLS counters (``TlsTxSw``, ``TlsTxDevice``, ...); empty when absent.

    The counters are per network namespace: other processes' kTLS sockets count too.
    """
    try:
        text = path.read_text(encoding="ascii")
    except OSError:
        return {}
    out = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].lstrip("-").isdigit():
            out[parts[0]] = int(parts[1])
    return out


def probe_tls_ulp() -> Finding:
    """Attach the ``tls`` ULP to a connected loopback socket, as OpenSSL does for kTLS.

    Why a probe and not only ``tcp_available_ulp``: a kernel with tls as a module lists it only
    once loaded, and the setsockopt itself loads it; ENOENT means the kernel has no tls ULP.
    """
    listed = None
    try:
        listed = AVAILABLE_ULP_PATH.read_text(encoding="ascii").split()
    except OSError:
        pass
    listed_txt = f"tcp_available_ulp: {' '.join(listed) if listed else '(empty)'}" if listed is not None \
        else "tcp_available_ulp unreadable"
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as srv:
            srv.bind(("127.0.0.1", 0))
            srv.listen(1)
            with socket.create_connection(srv.getsockname(), timeout=2) as cli:
                conn, _ = srv.accept()
                with conn:
                    try:
                        cli.setsockopt(socket.IPPROTO_TCP, TCP_ULP, b"tls")
                    except OSError as exc:
                        if exc.errno == errno.ENOENT:
                            return Finding(False, f"{NO_TLS_ULP} (CONFIG_TLS missing: setsockopt TCP_ULP 'tls' "
                                                  f"-> ENOENT; {listed_txt})")
                        return Finding(None, f"setsockopt TCP_ULP 'tls' failed: {exc.strerror}; {listed_txt}")
    except OSError as exc:
        if listed is not None:
            return Finding("tls" in listed, f"loopback probe impossible ({exc.strerror}); {listed_txt}")
        return Finding(None, f"loopback probe impossible ({exc.strerror}); {listed_txt}")
    return Finding(True, f"setsockopt TCP_ULP 'tls' succeeded; {listed_txt}")


# ---- NICs ------------------------------------------------------------------------------------
def parse_ethtool_features(text: str) -> dict[str, str]:
    """``ethtool -k`` output -> {feature: "on" | "off" | "on [fixed]" | "off [fixed]"}."""
    out = {}
    for line in text.splitlines():
        m = re.match(r"^\s*([\w-]+):\s*(on|off)(\s*\[[^\]]*\])?\s*$", line)
        if m:
            out[m[1]] = m[2] + (f" {m[3].strip()}" if m[3] else "")
    return out


def nic_tls_features(ethtool: Optional[str] = None) -> tuple[Optional[dict[str, dict[str, str]]], str]:
    """{iface: {tls-hw-tx-offload: ..., tls-hw-rx-offload: ...}} for each /sys/class/net entry,
    or (None, why) when ethtool is missing."""
    exe = ethtool or shutil.which("ethtool") or next((p for p in ETHTOOL_PATHS if os.path.exists(p)), None)
    if exe is None or not os.path.exists(exe):
        return None, "ethtool not installed (Debian package ethtool)"
    try:
        ifaces = sorted(os.listdir(SYS_CLASS_NET))
    except OSError:
        return None, f"{SYS_CLASS_NET} unreadable"
    out: dict[str, dict[str, str]] = {}
    for iface in ifaces:
        try:
            proc = subprocess.run([exe, "-k", iface], capture_output=True, text=True, timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            continue
        feats = parse_ethtool_features(proc.stdout) if proc.returncode == 0 else {}
        out[iface] = {k: v for k, v in feats.items() if k.startswith("tls-hw-")}
    return out, "ethtool -k on " + (", ".join(ifaces) if ifaces else "no interfaces")


def _offload_finding(feats: Optional[dict[str, dict[str, str]]], why: str, feature: str) -> Finding:
    if feats is None:
        return Finding(None, why)
    on = [i for i, f in feats.items() if f.get(feature, "").startswith("on")]
    states = "; ".join(f"{i}: {f.get(feature, 'not reported')}" for i, f in feats.items())
    return Finding(on, f"{why}: {states}" if states else why)


# ---- nginx and OpenSSL -----------------------------------------------------------------------
def _version_tuple(text: str) -> Optional[tuple[int, ...]]:
    m = re.search(r"(\d+)\.(\d+)\.(\d+)", text)
    return tuple(int(x) for x in m.groups()) if m else None


def parse_nginx_v(text: str) -> dict[str, str | None]:
    """``nginx -V`` (stderr) -> version, built-with / running-with OpenSSL, configure arguments."""
    out: dict[str, str | None] = {"version": None, "built_with": None, "running_with": None, "configure": ""}
    m = re.search(r"nginx version: nginx/(\S+)", text)
    if m:
        out["version"] = m[1]
    m = re.search(r"built with (OpenSSL [^\s(]+(?: [^(\n]*?)?)\s*(?:\(running with (OpenSSL [^)]+)\))?\s*$", text, re.M)
    if m:
        out["built_with"] = m[1].strip()
        out["running_with"] = (m[2] or m[1]).strip()
    m = re.search(r"configure arguments: (.*)$", text, re.M)
    if m:
        out["configure"] = m[1]
    return out


def openssl_ktls_built(openssl: Optional[str] = None) -> Finding:
    """Whether the system OpenSSL was compiled with kTLS (``OPENSSL_NO_KTLS`` undefined).

    ``openssl version -a`` does not say, so two traces of the compile option are read: the
    ``openssl s_server`` options ``-ktls``/``-sendfile`` exist only in kTLS builds, and the
    installed ``configuration.h`` defines ``OPENSSL_NO_KTLS`` in builds without it.
    """
    reasons = []
    verdict: Optional[bool] = None
    exe = openssl or shutil.which("openssl")
    if exe:
        try:
            proc = subprocess.run([exe, "s_server", "-help"], capture_output=True, text=True, timeout=10)
            helptext = proc.stdout + proc.stderr
            has = [opt for opt in ("-ktls", "-sendfile") if re.search(rf"^\s*{opt}\b", helptext, re.M)]
            if has:
                verdict = True
                reasons.append(f"openssl s_server offers {' '.join(has)} (kTLS builds only)")
            else:
                verdict = False
                reasons.append("openssl s_server offers neither -ktls nor -sendfile")
        except (OSError, subprocess.TimeoutExpired) as exc:
            reasons.append(f"openssl s_server -help failed: {exc}")
    else:
        reasons.append("openssl command not installed")
    for header in OPENSSL_CONFIGURATION_H:
        try:
            text = header.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if re.search(r"#\s*define\s+OPENSSL_NO_KTLS\b", text):
            verdict = False
            reasons.append(f"{header} defines OPENSSL_NO_KTLS")
        else:
            verdict = True if verdict is None else verdict
            reasons.append(f"{header} does not define OPENSSL_NO_KTLS")
        break
    return Finding(verdict, "; ".join(reasons))


def _nginx_findings(nginx: Optional[str], openssl_ktls: Finding) -> tuple[Finding, Finding, Finding]:
    exe = nginx or (NGINX_BINARY if os.path.exists(NGINX_BINARY) else shutil.which("nginx"))
    if not exe or not os.path.exists(exe):
        missing = "nginx not installed (Debian package nginx)"
        return Finding(None, missing), Finding(None, missing), Finding(None, missing)
    try:
        proc = subprocess.run([exe, "-V"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired) as exc:
        why = f"{exe} -V failed: {exc}"
        return Finding(None, why), Finding(None, why), Finding(None, why)
    info = parse_nginx_v(proc.stderr + proc.stdout)
    version = info["version"]
    nginx_f = Finding(version, f"{exe} -V")
    running = info["running_with"]
    if running:
        ossl_f = Finding(running, f"nginx -V: built with {info['built_with']}, running with {running}")
    else:
        ossl_f = Finding(None, "nginx -V names no OpenSSL (built without the ssl module?)")
    reasons = []
    ok: Optional[bool] = None
    nv = _version_tuple(version or "")
    if nv is not None and nv < (1, 21, 4):
        ok, reasons = False, [f"nginx {version} predates kTLS support (1.21.4)"]
    elif "--with-openssl-opt=enable-ktls" in (info["configure"] or ""):
        ok, reasons = True, ["nginx built with --with-openssl-opt=enable-ktls"]
    elif running:
        ov = _version_tuple(running)
        if ov is not None and ov < (3, 0, 0):
            ok, reasons = False, [f"{running} has no kTLS API for nginx (needs OpenSSL >= 3.0)"]
        elif openssl_ktls.value is False:
            ok, reasons = False, ["its OpenSSL was built without kTLS"]
        elif openssl_ktls.value is True:
            ok, reasons = True, [f"nginx {version} >= 1.21.4 with {running}, built with kTLS"]
        else:
            reasons = [f"nginx {version} with {running}; whether that OpenSSL has kTLS is unknown"]
    else:
        reasons = ["no OpenSSL found in nginx -V"]
    reasons.append("accepting 'ssl_conf_command Options KTLS' does not mean the kernel can do it")
    return nginx_f, ossl_f, Finding(ok, "; ".join(reasons))


def detect_ktls(*, nginx: Optional[str] = None, ethtool: Optional[str] = None,
                openssl: Optional[str] = None) -> KtlsSupport:
    """What this machine offers for kernel TLS (each finding with its reason)."""
    ulp = probe_tls_ulp()
    stat = read_tls_stat()
    if stat:
        stat_f = Finding(stat, f"{TLS_STAT_PATH} present")
    else:
        why = f"{TLS_STAT_PATH} absent"
        if ulp.value is False:
            why += f" ({NO_TLS_ULP})"
        stat_f = Finding({}, why)
    feats, why = nic_tls_features(ethtool)
    ossl_ktls = openssl_ktls_built(openssl)
    nginx_f, nginx_ossl, nginx_ktls = _nginx_findings(nginx, ossl_ktls)
    return KtlsSupport(tls_ulp=ulp, tls_stat=stat_f,
                       nic_tx_offload=_offload_finding(feats, why, "tls-hw-tx-offload"),
                       nic_rx_offload=_offload_finding(feats, why, "tls-hw-rx-offload"),
                       nginx=nginx_f, nginx_openssl=nginx_ossl, openssl_ktls=ossl_ktls, nginx_ktls=nginx_ktls,
                       nic_features=feats or {})


# ---- what runs, what ran ---------------------------------------------------------------------
def predict_mode(requested: str, support: KtlsSupport) -> str:
    """Before serving: what ``requested`` will most likely turn into on this machine."""
    check_mode(requested)
    if requested == "plain":
        return "plain HTTP"
    if requested == "tls":
        return "user-space TLS (OpenSSL)"
    reason = support.fallback_reason()
    if reason is not None:
        return f"requested {requested}, will run user-space TLS ({reason})"
    if requested == "ktls-nic" and support.nic_tx_offload.value is not None and not support.nic_tx_offload.value:
        return ("requested ktls-nic, at best kTLS in software (no NIC with tls-hw-tx-offload on; "
                "loopback never offloads)")
    if requested == "ktls-nic":
        return "requested ktls-nic: the NIC encrypts only on routes through it (not loopback); counters will tell"
    return "requested ktls: kernel TLS possible; the tls_stat counters will tell"


def tls_stat_delta(before: Mapping[str, int], after: Mapping[str, int]) -> dict[str, int]:
    """after - before for every counter in ``after`` (a gauge like TlsCurrTxSw may go down)."""
    return {k: int(v) - int(before.get(k, 0)) for k, v in after.items()}


def _describe_tls(entries: Sequence[AccessEntry]) -> str:
    tls = [e for e in entries if e.ssl_protocol != "-"]
    kinds = sorted({f"{e.ssl_protocol} {e.ssl_cipher}" for e in tls})
    return ", ".join(kinds)


def verify_mode(requested: str, before: Mapping[str, int], after: Mapping[str, int], *,
                access_entries: Optional[Sequence[AccessEntry]] = None,
                support: Optional[KtlsSupport] = None,
                nginx_debug: Optional[Mapping[str, int]] = None) -> str:
    """One sentence saying what really ran for requests made while ``before``/``after`` (two
    :func:`read_tls_stat` snapshots) were taken, e.g. ``"requested ktls, ran user-space TLS
    (no tls ULP in this kernel)"``.

    Evidence: ``TlsTxDevice`` rising means the NIC encrypted, ``TlsTxSw`` rising means the
    kernel did; neither rising means user space, whatever was requested. The access log (its
    ``$ssl_protocol``, ``"-"`` without TLS) shows whether requests used TLS at all; nginx's
    debug log (``nginx_debug`` from :meth:`NginxServer.ktls_debug_evidence`) adds its own word.
    Counters are per network namespace, so other kTLS users on the machine can raise them.
    """
    check_mode(requested)
    entries = list(access_entries) if access_entries is not None else None
    if entries is not None and not entries:
        return f"requested {requested}, not verified (no requests in the access log)"
    if requested == "plain":
        if entries is None:
            return "requested plain, not verified (no access log given)"
        with_tls = [e for e in entries if e.ssl_protocol != "-"]
        if with_tls:
            return f"requested plain, but {len(with_tls)} of {len(entries)} requests used TLS ({_describe_tls(with_tls)})"
        return f"plain HTTP (verified: {len(entries)} requests logged without TLS)"

    if entries is not None:
        plain = [e for e in entries if e.ssl_protocol == "-"]
        if plain:
            return f"requested {requested}, but {len(plain)} of {len(entries)} requests had no TLS"
    proto = f"; {_describe_tls(entries)}" if entries else ""
    if not before and not after:
        # No tls_stat: the kernel's tls code never loaded, so nothing ran in the kernel. Say why.
        ulp = support.tls_ulp if support is not None else probe_tls_ulp()
        why = NO_TLS_ULP if ulp.value is False else f"no {TLS_STAT_PATH}: the kernel's tls module never loaded"
        evidence_why = why
    else:
        d = tls_stat_delta(before, after)
        dev, sw = d.get("TlsTxDevice", 0), d.get("TlsTxSw", 0)
        if dev > 0 and requested != "tls":
            return f"requested {requested}, ran kTLS with NIC offload (TlsTxDevice +{dev}{proto})"
        if sw > 0 and requested != "tls":
            nic = " (the NIC did not encrypt: TlsTxDevice unchanged)" if requested == "ktls-nic" else ""
            return f"requested {requested}, ran kTLS in the kernel, software crypto (TlsTxSw +{sw}{proto}){nic}"
        if requested == "tls":
            if dev > 0 or sw > 0:
                return (f"requested tls, ran user-space TLS as configured, but kTLS counters rose "
                        f"(TlsTxSw +{sw}, TlsTxDevice +{dev}: another kTLS user in this namespace?{proto})")
            return f"user-space TLS (OpenSSL) (verified: kTLS counters unchanged{proto})"
        why = "kTLS counters TlsTxSw/TlsTxDevice unchanged"
        if support is not None and support.fallback_reason():
            why += f"; {support.fallback_reason()}"
        evidence_why = why
    if requested == "tls":
        return f"user-space TLS (OpenSSL) ({evidence_why}{proto})"
    if nginx_debug and nginx_debug.get("ktls_send", 0) > 0:
        evidence_why += f"; yet nginx logged BIO_get_ktls_send(): 1 x{nginx_debug['ktls_send']}"
    return f"requested {requested}, ran user-space TLS ({evidence_why}{proto})"
