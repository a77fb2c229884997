#!/usr/bin/env python3
"""Weather reverse proxy for the Mobile-Money (MoMo) Open API.

Sits between a conformance test client and a MoMo server and injects only the
bad weather that the API spec (momo-api-spec.md), the live-service notes
(real-api-notes.md) and HTTP itself (RFC 9110 / RFC 9112) allow a conforming
server or the gateway in front of it to produce.  See README.md for the list
of conditions and the clause that makes each one legal.

Standard library only.
"""

import argparse
import base64
import email.utils
import http.client
import json
import math
import random
import re
import signal
import socket
import socketserver
import struct
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MAX_BODY = 1024 * 1024                 # request bodies over this get 413
MAX_RESPONSE_BUFFER = 8 * 1024 * 1024  # upstream bodies over this are streamed
DEFAULT_BURST_LENGTH = 2.0
MAX_DEFAULT_BURST_LENGTH = 3.0
CALLBACK_PREFIX = "/__weather_callback/"
MAX_PENDING_CALLBACK_RELAYS = 256

# Fixed order: the per-request random stream draws one number per condition in
# this order, so a seed gives the same decisions for the same request index.
CONDITIONS = (
    "gateway-unavailable",
    "gateway-timeout-after",
    "internal-error",
    "cut-before",
    "cut-after",
    "latency",
    "slow-body",
    "callback-late",
    "callback-repeated",
)

# RFC 9110 §7.6.1 hop-by-hop fields (plus the legacy Proxy-Connection), and
# Proxy-Authenticate/Proxy-Authorization which are addressed to this proxy.
HOP_BY_HOP = {
    "connection", "keep-alive", "proxy-connection", "proxy-authenticate",
    "proxy-authorization", "te", "trailer", "transfer-encoding", "upgrade",
}


class Operation:
    def __init__(self, number, name, method, pattern, internal_error,
                 callback=False):
        self.number = number
        self.name = name
        self.method = method
        self.regex = re.compile("^" + pattern + "$")
        self.internal_error = internal_error
        self.callback = callback


# Per-operation table.  internal_error=True only where the operation's §4
# response list includes 500 AND §7 gives it an error-code set containing
# INTERNAL_PROCESSING_ERROR.  Reasons are in README.md.
OPERATIONS = (
    Operation(1, "collection token", "POST", r"/collection/token/", False),
    Operation(2, "request to pay", "POST", r"/collection/v1_0/requesttopay",
              True, callback=True),
    Operation(3, "delivery notification", "POST",
              r"/collection/v1_0/requesttopay/[^/]+/deliverynotification", False),
    Operation(4, "collection balance", "GET",
              r"/collection/v1_0/account/balance/[^/]+", True),
    Operation(5, "basic user info", "GET",
              r"/collection/v1_0/accountholder/msisdn/[^/]+/basicuserinfo", False),
    Operation(6, "user info with consent", "GET",
              r"/collection/oauth2/v1_0/userinfo", False),
    Operation(7, "bc-authorize", "POST", r"/collection/v1_0/bc-authorize",
              False, callback=True),
    Operation(8, "collection account holder active", "GET",
              r"/collection/v1_0/accountholder/[^/]+/[^/]+/active", True),
    Operation(9, "refund", "POST", r"/disbursement/v1_0/refund", True,
              callback=True),
    Operation(10, "deposit", "POST", r"/disbursement/v1_0/deposit", True,
              callback=True),
    Operation(11, "oauth2 consent token", "POST",
              r"/disbursement/oauth2/token/", False),
    Operation(12, "disbursement account holder active", "GET",
              r"/disbursement/v1_0/accountholder/[^/]+/[^/]+/active", True),
    Operation(13, "remittance balance", "GET",
              r"/remittance/v1_0/account/balance", True),
    Operation(14, "create API user", "POST", r"/v1_0/apiuser", False),
    Operation(15, "create API key", "POST", r"/v1_0/apiuser/[^/]+/apikey", False),
    Operation(16, "get API user", "GET", r"/v1_0/apiuser/[^/]+", False),
    Operation(17, "request-to-pay status", "GET",
              r"/collection/v1_0/requesttopay/[^/]+", False),
    Operation(18, "refund status", "GET", r"/disbursement/v1_0/refund/[^/]+", False),
    Operation(19, "deposit status", "GET", r"/disbursement/v1_0/deposit/[^/]+", False),
)


def match_operation(method, target):
    path = target.split("?", 1)[0]
    for op in OPERATIONS:
        if op.method == method and op.regex.match(path):
            return op
    return None


def internal_error_allowed(method, target):
    op = match_operation(method, target)
    return bool(op and op.internal_error)


# --------------------------------------------------------------------------
# configuration / command line

class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        sys.stderr.write("weather_proxy: %s\n" % message.replace("\n", " "))
        sys.exit(2)


def parse_conditions(text):
    rates = {c: 0.0 for c in CONDITIONS}
    if text is None or text.strip() == "":
        return rates
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        if "=" not in item:
            raise UsageError("--conditions: %r is not name=rate" % item)
        name, _, value = item.partition("=")
        name = name.strip()
        try:
            rate = float(value)
        except ValueError:
            raise UsageError("--conditions: rate %r for %s is not a number"
                             % (value, name))
        if not (0.0 <= rate <= 1.0) or math.isnan(rate):
            raise UsageError("--conditions: rate for %s must be between 0 and 1"
                             % name)
        if name == "all":
            for c in CONDITIONS:
                rates[c] = rate
        elif name == "outage":
            raise UsageError("--conditions: outage is set with --burst-every "
                             "and --burst-length, not with a rate")
        elif name in rates:
            rates[name] = rate
        else:
            raise UsageError("--conditions: unknown condition %r (known: all, %s)"
                             % (name, ", ".join(CONDITIONS)))
    return rates


class Upstream:
    def __init__(self, url):
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise UsageError("--upstream must be an http:// or https:// URL "
                             "with a host, e.g. http://127.0.0.1:8080")
        if parts.query or parts.fragment:
            raise UsageError("--upstream must not have a query or fragment")
        try:
            port = parts.port
        except ValueError:
            raise UsageError("--upstream has an invalid port")
        self.scheme = parts.scheme
        self.host = parts.hostname
        self.port = port or (443 if parts.scheme == "https" else 80)
        self.prefix = parts.path.rstrip("/")
        self.netloc = parts.netloc

    def connect(self, timeout):
        if self.scheme == "https":
            return http.client.HTTPSConnection(self.host, self.port,
                                               timeout=timeout)
        return http.client.HTTPConnection(self.host, self.port, timeout=timeout)


class Config:
    def __init__(self, argv):
        p = _Parser(prog="weather_proxy.py",
                    description="MoMo Open API weather reverse proxy")
        p.add_argument("--upstream", required=True,
                       help="base URL of the MoMo server, e.g. http://127.0.0.1:8080")
        p.add_argument("--port", type=int, default=0,
                       help="port to bind on 127.0.0.1 (0 = any free port)")
        p.add_argument("--seed", type=int, default=0)
        p.add_argument("--conditions", default=None,
                       help="name=rate,... or all=rate")
        p.add_argument("--burst-every", type=float, default=None,
                       help="seconds between starts of outage bursts")
        p.add_argument("--burst-length", type=float, default=None,
                       help="length of each outage burst in seconds (default 2, max 3)")
        p.add_argument("--allow-long-bursts", action="store_true",
                       help="allow --burst-length over 3 s")
        p.add_argument("--upstream-timeout", type=float, default=30.0,
                       help="seconds to wait for the upstream (default 30)")
        p.add_argument("--log", default=None, help="JSON-lines log file")
        p.add_argument("--rewrite-host", action="store_true",
                       help="send the upstream's authority as Host instead of "
                            "the client's (needed for a virtual-hosted upstream)")
        a = p.parse_args(argv)
        try:
            self.upstream = Upstream(a.upstream)
            self.rates = parse_conditions(a.conditions)
            if not (0 <= a.port <= 65535):
                raise UsageError("--port must be between 0 and 65535")
            if a.burst_length is not None and a.burst_every is None:
                raise UsageError("--burst-length needs --burst-every")
            self.burst_every = a.burst_every
            self.burst_length = None
            if a.burst_every is not None:
                if not (a.burst_every > 0) or math.isinf(a.burst_every):
                    raise UsageError("--burst-every must be a positive number of seconds")
                length = DEFAULT_BURST_LENGTH if a.burst_length is None else a.burst_length
                if a.burst_length is None:
                    length = min(length, a.burst_every / 2.0)
                if not (length > 0):
                    raise UsageError("--burst-length must be a positive number of seconds")
                if length > MAX_DEFAULT_BURST_LENGTH and not a.allow_long_bursts:
                    raise UsageError("--burst-length must be at most 3 seconds "
                                     "(add --allow-long-bursts to exceed)")
                if length >= a.burst_every:
                    raise UsageError("--burst-length must be shorter than --burst-every")
                self.burst_length = length
            if not (a.upstream_timeout > 0):
                raise UsageError("--upstream-timeout must be positive")
        except UsageError as e:
            p.error(str(e))
        self.port = a.port
        self.seed = a.seed
        self.upstream_timeout = a.upstream_timeout
        self.log_path = a.log
        self.rewrite_host = a.rewrite_host


# --------------------------------------------------------------------------
# helpers

class JsonLog:
    def __init__(self, path):
        self.lock = threading.Lock()
        self.fh = open(path, "a", encoding="utf-8") if path else None

    def write(self, rec):
        if self.fh is None:
            return
        line = json.dumps(rec, sort_keys=True)
        with self.lock:
            self.fh.write(line + "\n")
            self.fh.flush()

    def close(self):
        if self.fh:
            with self.lock:
                self.fh.close()
                self.fh = None


def gateway_body(status, message):
    # notes: "Gateway errors are {statusCode,message} [observed]"
    return json.dumps({"statusCode": status, "message": message}).encode()


def internal_error_body():
    return json.dumps({
        "code": "INTERNAL_PROCESSING_ERROR",
        "message": "An internal error occurred while processing the request.",
    }).encode()


def http_date(ts):
    return email.utils.formatdate(ts, usegmt=True)  # IMF-fixdate


def clean_value(v):
    # RFC 9112 §5.2: a proxy replaces obs-fold with SP; RFC 9110 §5.5: the
    # field value excludes leading and trailing whitespace.
    return re.sub(r"\r?\n[ \t]+", " ", v).strip(" \t")


def connection_tokens(headers):
    toks = set()
    for v in headers.get_all("Connection") or []:
        for t in v.split(","):
            t = t.strip().lower()
            if t:
                toks.add(t)
    return toks


def encode_callback(late_ms, gap_ms, original):
    b = base64.urlsafe_b64encode(original.encode()).decode().rstrip("=")
    return "%s%d/%d/%s" % (CALLBACK_PREFIX, late_ms, gap_ms, b)


_CB_RE = re.compile(r"^" + re.escape(CALLBACK_PREFIX) +
                    r"(\d+)/(-?\d+)/([A-Za-z0-9_-]+)(.*)$")


def decode_callback(target):
    m = _CB_RE.match(target)
    if not m:
        return None
    b = m.group(3)
    try:
        original = base64.urlsafe_b64decode(b + "=" * (-len(b) % 4)).decode()
    except Exception:
        return None
    tail = m.group(4)
    if tail:
        if tail.startswith("?") and "?" in original:
            original += "&" + tail[1:]
        else:
            original += tail
    return int(m.group(1)), int(m.group(2)), original


def callback_rewritable(url):
    """Only plain-http loopback URLs can be served by this proxy (it binds
    127.0.0.1 only and has no TLS certificate); the host is kept verbatim."""
    try:
        parts = urllib.parse.urlsplit(url)
        parts.port
    except ValueError:
        return None
    if parts.scheme.lower() != "http":
        return None
    if (parts.hostname or "").lower() not in ("127.0.0.1", "localhost"):
        return None
    return parts


def same_host_other_port(netloc, port):
    """netloc with its host written exactly as the client wrote it (userinfo
    kept too) and the port replaced."""
    userinfo, at, hostport = netloc.rpartition("@")
    if hostport.startswith("["):
        host = hostport[:hostport.index("]") + 1]
    else:
        host = hostport.split(":", 1)[0]
    return "%s%s%s:%d" % (userinfo, at, host, port)


class BodyError(Exception):
    def __init__(self, status, message):
        Exception.__init__(self, message)
        self.status = status
        self.message = message


class UpstreamError(Exception):
    def __init__(self, status, message):
        Exception.__init__(self, message)
        self.status = status
        self.message = message


class UpstreamAnswer:
    def __init__(self, status, reason, headers, body, rest, chunked, length):
        self.status = status
        self.reason = reason
        self.headers = headers      # list of (name, value), hop-by-hop removed
        self.body = body            # bytes read so far (whole body unless rest)
        self.rest = rest            # HTTPResponse still to stream, or None
        self.chunked = chunked      # upstream used chunked framing
        self.length = length        # upstream Content-Length header value or None
        self.conn = None

    def close(self):
        if self.conn is not None:
            try:
                self.conn.close()
            except Exception:
                pass
            self.conn = None

    def error_code(self):
        try:
            return json.loads(self.body.decode("utf-8")).get("code")
        except Exception:
            return None


# --------------------------------------------------------------------------
# server

class WeatherServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def server_bind(self):
        # HTTPServer.server_bind would call socket.getfqdn(), which can hang
        # on hosts without DNS; the name is only used for logging anyway.
        socketserver.TCPServer.server_bind(self)
        self.server_name = "127.0.0.1"
        self.server_port = self.server_address[1]

    def __init__(self, cfg, log):
        self.cfg = cfg
        self.log = log
        self.start_time = time.monotonic()
        self._count_lock = threading.Lock()
        self._count = 0
        self.relay_slots = threading.BoundedSemaphore(MAX_PENDING_CALLBACK_RELAYS)
        ThreadingHTTPServer.__init__(self, ("127.0.0.1", cfg.port), Handler)

    def next_index(self):
        with self._count_lock:
            self._count += 1
            return self._count

    def burst(self, now=None):
        """Returns (burst number, seconds left) while a burst is on, else None.
        Burst k (k = 1, 2, ...) covers [k*every, k*every + length) seconds
        after start."""
        cfg = self.cfg
        if cfg.burst_every is None:
            return None
        t = (time.monotonic() if now is None else now) - self.start_time
        k = int(t // cfg.burst_every)
        if k < 1:
            return None
        into = t - k * cfg.burst_every
        if into < cfg.burst_length:
            return k, cfg.burst_length - into
        return None

    def burst_mode(self, k):
        r = random.Random("weather-burst:%d:%d" % (self.cfg.seed, k))
        return "internal-error" if r.random() < 0.5 else "gateway-unavailable"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "weather-proxy"
    timeout = 300

    def log_message(self, fmt, *args):  # keep stdout/stderr quiet
        pass

    def __getattr__(self, name):
        if name.startswith("do_"):
            return self._handle
        raise AttributeError(name)

    # ---------------------------------------------------------------- body
    def _read_body(self):
        te = self.headers.get_all("Transfer-Encoding")
        if te:
            codings = [c.strip().lower() for v in te for c in v.split(",") if c.strip()]
            self.close_connection = True
            if not codings or codings[-1] != "chunked":
                raise BodyError(400, "Unsupported transfer coding.")
            return self._read_chunked()
        cl = self.headers.get_all("Content-Length")
        if not cl:
            return None
        values = set(v.strip() for v in ",".join(cl).split(","))
        if len(values) != 1 or not re.fullmatch(r"[0-9]{1,18}", next(iter(values))):
            self.close_connection = True
            raise BodyError(400, "Invalid Content-Length.")
        n = int(next(iter(values)))
        if n > MAX_BODY:
            self.close_connection = True
            self._unread = n
            raise BodyError(413, "Request body larger than 1 MiB.")
        data = self.rfile.read(n)
        if len(data) != n:
            self.close_connection = True
            raise BodyError(None, "client closed before sending the body")
        return data

    def _drain(self):
        """Lingering close (RFC 9112 §9.6): after a 413, read and discard what
        the client is still sending (bounded) so it can read the answer
        instead of getting a reset."""
        left = min(getattr(self, "_unread", 8 * MAX_BODY), 8 * MAX_BODY)
        try:
            self.connection.settimeout(1.0)
            while left > 0:
                data = self.rfile.read1(min(65536, left)) if hasattr(
                    self.rfile, "read1") else self.rfile.read(min(65536, left))
                if not data:
                    break
                left -= len(data)
        except OSError:
            pass

    def _read_chunked(self):
        out = bytearray()
        while True:
            line = self.rfile.readline(65537)
            if not line:
                raise BodyError(None, "client closed inside chunked body")
            size_txt = line.split(b";", 1)[0].strip(b" \t\r\n")
            if not re.fullmatch(rb"[0-9A-Fa-f]{1,16}", size_txt):
                raise BodyError(400, "Invalid chunked body.")
            size = int(size_txt, 16)
            if size == 0:
                while True:  # trailer section, discarded
                    t = self.rfile.readline(65537)
                    if t in (b"\r\n", b"\n", b""):
                        break
                return bytes(out)
            if len(out) + size > MAX_BODY:
                raise BodyError(413, "Request body larger than 1 MiB.")
            chunk = self.rfile.read(size)
            if len(chunk) != size:
                raise BodyError(None, "client closed inside chunked body")
            out += chunk
            self.rfile.readline(65537)

    # ------------------------------------------------------------ writing
    def _client_is_11(self):
        return self.request_version == "HTTP/1.1"

    def _emit_log(self, status=None):
        """Write the request's log line once, just before the client gets
        (or does not get) its answer, so a reader never lags the client."""
        rec = getattr(self, "_rec", None)
        if rec is not None:
            rec["status"] = status
            self._rec = None
            self.server.log.write(rec)

    def _write_head(self, status, reason, headers):
        self._emit_log(status)
        self.send_response_only(status, reason)
        for k, v in headers:
            self.send_header(k, v)
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()

    def _send_simple(self, status, body, extra=(), content_type="application/json"):
        headers = [("Date", http_date(time.time()))]
        bodiless = status in (204, 304) or 100 <= status < 200
        if not bodiless:
            headers.append(("Content-Type", content_type))
            headers.append(("Content-Length", str(len(body))))
        headers.extend(extra)
        self._write_head(status, None, headers)
        if self.command != "HEAD" and not bodiless:
            self.wfile.write(body)

    def _cut(self, reset):
        """Close the client connection without answering."""
        self._emit_log(None)
        self.close_connection = True
        try:
            if reset:
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                           struct.pack("ii", 1, 0))
                self.connection.close()
            else:
                self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _write_chunk(self, data):
        if data:
            self.wfile.write(b"%x\r\n" % len(data) + data + b"\r\n")

    def _relay_answer(self, ans, slow=None):
        """Send the upstream's answer.  slow = (chunked, total_s, piece) or None."""
        no_body = (self.command == "HEAD" or ans.status in (204, 304)
                   or 100 <= ans.status < 200)
        headers = list(ans.headers)
        if no_body:
            if ans.length is not None:
                headers.append(("Content-Length", ans.length))
            self._write_head(ans.status, ans.reason, headers)
            return
        if ans.rest is not None:  # very large body: stream it through
            if ans.length is not None:
                mode = "length"
                headers.append(("Content-Length", ans.length))
            elif self._client_is_11():
                mode = "chunked"
                headers.append(("Transfer-Encoding", "chunked"))
            else:
                mode = "close"
                self.close_connection = True
            self._write_head(ans.status, ans.reason, headers)
            pieces = [ans.body]
            while True:
                for p in pieces:
                    if mode == "chunked":
                        self._write_chunk(p)
                    else:
                        self.wfile.write(p)
                data = ans.rest.read(65536)
                if not data:
                    break
                pieces = [data]
            if mode == "chunked":
                self.wfile.write(b"0\r\n\r\n")
            return
        body = ans.body
        if slow is not None and body:
            use_chunked, total, piece = slow
            use_chunked = use_chunked and self._client_is_11()
            piece = max(piece, int(math.ceil(len(body) / 50.0)))
            parts = [body[i:i + piece] for i in range(0, len(body), piece)]
            pause = total / max(1, len(parts))
            if use_chunked:
                headers.append(("Transfer-Encoding", "chunked"))
            else:
                headers.append(("Content-Length", str(len(body))))
            self._write_head(ans.status, ans.reason, headers)
            for part in parts:
                time.sleep(pause)
                if use_chunked:
                    self._write_chunk(part)
                else:
                    self.wfile.write(part)
            if use_chunked:
                self.wfile.write(b"0\r\n\r\n")
            return
        if ans.chunked and self._client_is_11():
            headers.append(("Transfer-Encoding", "chunked"))
            self._write_head(ans.status, ans.reason, headers)
            self._write_chunk(body)
            self.wfile.write(b"0\r\n\r\n")
        else:
            headers.append(("Content-Length", str(len(body))))
            self._write_head(ans.status, ans.reason, headers)
            self.wfile.write(body)

    # ---------------------------------------------------------- upstream
    def _request_headers(self, callback_url=None):
        drop = HOP_BY_HOP | connection_tokens(self.headers) | {
            "content-length", "expect"}
        out = []
        have_host = False
        rewrite_host = self.server.cfg.rewrite_host
        for k, v in self.headers.items():
            lk = k.lower()
            if lk in drop:
                continue
            if lk == "host":
                if have_host:
                    continue
                have_host = True
                if rewrite_host:
                    v = self.server.cfg.upstream.netloc
            if lk == "x-callback-url" and callback_url is not None:
                v = callback_url
            out.append((k, clean_value(v)))
        if not have_host:
            out.insert(0, ("Host", self.server.cfg.upstream.netloc))
        return out

    def _forward(self, target, headers, body):
        cfg = self.server.cfg
        up = cfg.upstream
        conn = up.connect(cfg.upstream_timeout)
        try:
            conn.putrequest(self.command, up.prefix + target, skip_host=True,
                            skip_accept_encoding=True)
            for k, v in headers:
                conn.putheader(k, v)
            if body is not None:
                conn.putheader("Content-Length", str(len(body)))
            conn.endheaders(body if body else None)
            resp = conn.getresponse()
            drop = HOP_BY_HOP | connection_tokens(resp.msg) | {"content-length"}
            hdrs = [(k, clean_value(v)) for k, v in resp.msg.items()
                    if k.lower() not in drop]
            length = resp.msg.get("Content-Length")
            chunked = bool(resp.chunked)
            data = resp.read(MAX_RESPONSE_BUFFER + 1)
            rest = None
            if len(data) > MAX_RESPONSE_BUFFER:
                rest = resp
            ans = UpstreamAnswer(resp.status, resp.reason, hdrs, data, rest,
                                 chunked, length.strip() if length else None)
            ans.conn = conn
            if rest is None:
                ans.close()
            return ans
        except socket.timeout:
            conn.close()
            raise UpstreamError(504, "Upstream did not answer in time.")
        except (OSError, http.client.HTTPException) as e:
            conn.close()
            raise UpstreamError(502, "Upstream failed: %s" % type(e).__name__)

    # ----------------------------------------------------------- callbacks
    def _relay_callback(self, method, original, headers, body):
        parts = urllib.parse.urlsplit(original)
        port = parts.port or 80
        path = parts.path or "/"
        if parts.query:
            path += "?" + parts.query
        conn = http.client.HTTPConnection(parts.hostname, port, timeout=10)
        try:
            conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
            conn.putheader("Host", parts.netloc)
            for k, v in headers:
                conn.putheader(k, v)
            conn.putheader("Content-Length", str(len(body)))
            conn.endheaders(body if body else None)
            resp = conn.getresponse()
            data = resp.read(MAX_BODY)
            return resp.status, resp.reason, resp.getheader("Content-Type"), data
        finally:
            conn.close()

    def _handle_callback(self, target):
        srv = self.server
        dec = decode_callback(target)
        rec = {"kind": "callback", "method": self.command, "path": target,
               "injected": [], "upstream_status": None}
        try:
            body = self._read_body() or b""
        except BodyError as e:
            rec["error"] = e.message
            if e.status is None:
                self.close_connection = True
            else:
                self._send_simple(e.status, gateway_body(e.status, e.message))
            srv.log.write(rec)
            return
        if dec is None:
            self._send_simple(404, gateway_body(404, "Unknown callback path."))
            srv.log.write(rec)
            return
        late_ms, gap_ms, original = dec
        rec["relay_to"] = original
        if late_ms:
            rec["injected"].append("callback-late")
        if gap_ms >= 0:
            rec["injected"].append("callback-repeated")
        drop = HOP_BY_HOP | connection_tokens(self.headers) | {
            "content-length", "expect", "host"}
        headers = [(k, clean_value(v)) for k, v in self.headers.items()
                   if k.lower() not in drop]
        method = self.command
        log = srv.log

        def relay(label):
            r = dict(kind="callback-relay", method=method, relay_to=original,
                     copy=label)
            try:
                st, _, _, _ = self._relay_callback(method, original, headers, body)
                r["listener_status"] = st
            except (OSError, http.client.HTTPException) as e:
                r["error"] = type(e).__name__
            log.write(r)

        background = late_ms > 0 or gap_ms >= 0
        if background and not srv.relay_slots.acquire(blocking=False):
            late_ms, gap_ms, background = 0, -1, False
            rec["injected"] = []
            rec["note"] = "too many pending callback relays; relayed at once"

        if late_ms > 0:
            # acknowledge at once, deliver later (and maybe twice)
            self._send_simple(200, b"", content_type="text/plain")
            srv.log.write(rec)

            def later():
                try:
                    time.sleep(late_ms / 1000.0)
                    relay("first")
                    if gap_ms >= 0:
                        time.sleep(gap_ms / 1000.0)
                        relay("repeat")
                finally:
                    srv.relay_slots.release()
            threading.Thread(target=later, daemon=True).start()
            return

        # deliver now and hand the listener's answer back to the server
        try:
            st, reason, ctype, data = self._relay_callback(method, original,
                                                           headers, body)
            rec["listener_status"] = st
            self._send_simple(st, data, content_type=ctype or "text/plain")
        except (OSError, http.client.HTTPException) as e:
            rec["error"] = type(e).__name__
            self._send_simple(502, gateway_body(502, "Callback listener unreachable."))
        srv.log.write(rec)
        if gap_ms >= 0:
            def again():
                try:
                    time.sleep(gap_ms / 1000.0)
                    relay("repeat")
                finally:
                    srv.relay_slots.release()
            threading.Thread(target=again, daemon=True).start()

    # -------------------------------------------------------------- main
    def _handle(self):
        srv = self.server
        cfg = srv.cfg
        if not self._client_is_11():
            self.close_connection = True
        target = self.path
        if not target.startswith("/"):
            parts = urllib.parse.urlsplit(target)
            if parts.scheme in ("http", "https"):
                target = (parts.path or "/") + ("?" + parts.query if parts.query else "")
        self._rec = None
        if target.startswith(CALLBACK_PREFIX):
            try:
                return self._handle_callback(target)
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True
                return

        n = srv.next_index()
        rng = random.Random("weather:%d:%d" % (cfg.seed, n))
        hits = {c: rng.random() < cfg.rates[c] for c in CONDITIONS}
        prm = {
            "latency": rng.uniform(0.05, 1.5),
            "ra_delta": rng.randint(0, 1),
            "ra_ahead": rng.randint(1, 2),
            "cut_reset": rng.random() < 0.5,
            "pre_pick": rng.random(),
            "post_pick": rng.random(),
            "slow_chunked": rng.random() < 0.5,
            "slow_total": rng.uniform(0.3, 1.0),
            "slow_piece": rng.randint(1, 16),
            "cb_late_ms": rng.randint(500, 3000),
            "cb_gap_ms": rng.randint(100, 1000),
        }
        rec = {"n": n, "method": self.command, "path": target, "injected": [],
               "upstream_status": None, "status": None}
        self._rec = rec
        try:
            self._handle_request(target, n, hits, prm, rec)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
            rec["error"] = "client went away"
        finally:
            self._emit_log(rec["status"])

    def _delay(self, hits, prm, rec):
        if hits["latency"]:
            rec["injected"].append("latency")
            time.sleep(prm["latency"])

    def _retry_after(self, n, prm, seconds_left=None):
        """RFC 9110 §10.2.3: delta-seconds or HTTP-date; alternate by request
        index (odd: delta-seconds, even: HTTP-date)."""
        if seconds_left is None:
            if n % 2:
                return str(prm["ra_delta"])
            return http_date(math.ceil(time.time() + prm["ra_ahead"]))
        if n % 2:
            return str(max(1, int(math.ceil(seconds_left))))
        return http_date(math.ceil(time.time() + seconds_left))

    def _handle_request(self, target, n, hits, prm, rec):
        srv = self.server
        try:
            body = self._read_body()
        except BodyError as e:
            rec["error"] = e.message
            if e.status is None:
                self.close_connection = True
            else:
                self._send_simple(e.status, gateway_body(e.status, e.message))
                if e.status == 413:
                    self._drain()
            return

        op = match_operation(self.command, target)
        # A request without a subscription key is stopped by the gateway with
        # 401 (notes) before any service could fail, so no 500 for it.
        ie_ok = bool(op and op.internal_error and
                     (self.headers.get("Ocp-Apim-Subscription-Key") or "").strip())

        # 7. outage burst: the whole server is down for every operation alike
        now = time.monotonic()
        rec["t"] = round(now - srv.start_time, 4)  # seconds since start
        b = srv.burst(now)
        if b is not None:
            k, left = b
            rec["injected"].append("outage")
            rec["burst"] = k
            if srv.burst_mode(k) == "internal-error" and ie_ok:
                self._send_simple(500, internal_error_body())
            else:
                self._send_simple(503, gateway_body(503, "Service unavailable."),
                                  extra=[("Retry-After", self._retry_after(n, prm, left))])
            return

        # 4/1/3. answers made without forwarding
        pre = [c for c in ("cut-before", "gateway-unavailable", "internal-error")
               if hits[c] and (c != "internal-error" or ie_ok)]
        if pre:
            choice = pre[int(prm["pre_pick"] * len(pre))]
            if choice == "cut-before":
                rec["injected"].append("cut-before")
                self._cut(prm["cut_reset"])
                return
            self._delay(hits, prm, rec)
            rec["injected"].append(choice)
            if choice == "gateway-unavailable":
                self._send_simple(503, gateway_body(503, "Service unavailable."),
                                  extra=[("Retry-After", self._retry_after(n, prm))])
            else:
                self._send_simple(500, internal_error_body())
            return

        # 8. callbacks: point X-Callback-Url at this proxy, relay late/twice
        callback_url = None
        cb_conds = []
        original_cb = self.headers.get("X-Callback-Url")
        if (op is not None and op.callback and original_cb
                and (hits["callback-late"] or hits["callback-repeated"])):
            parts = callback_rewritable(original_cb.strip())
            if parts is not None:
                late = prm["cb_late_ms"] if hits["callback-late"] else 0
                gap = prm["cb_gap_ms"] if hits["callback-repeated"] else -1
                callback_url = "http://%s%s" % (
                    same_host_other_port(parts.netloc, srv.server_address[1]),
                    encode_callback(late, gap, original_cb.strip()))
                cb_conds = [c for c in ("callback-late", "callback-repeated") if hits[c]]

        try:
            ans = self._forward(target, self._request_headers(callback_url), body)
            if (callback_url is not None and ans.status == 500
                    and ans.error_code() == "INVALID_CALLBACK_URL_HOST"):
                # The notes say this rejection creates no transaction, so the
                # client's own request can be sent as it was.
                ans.close()
                rec["note"] = "upstream refused the rewritten callback host; resent unchanged"
                cb_conds = []
                ans = self._forward(target, self._request_headers(None), body)
        except UpstreamError as e:
            rec["error"] = e.message
            self._send_simple(e.status, gateway_body(e.status, e.message))
            return
        rec["injected"].extend(cb_conds)
        rec["upstream_status"] = ans.status

        try:
            # 2/4. the upstream acted; the client does not learn how
            post = [c for c in ("cut-after", "gateway-timeout-after") if hits[c]]
            if post:
                choice = post[int(prm["post_pick"] * len(post))]
                if ans.rest is not None:
                    while ans.rest.read(65536):
                        pass
                if choice == "cut-after":
                    rec["injected"].append("cut-after")
                    self._cut(prm["cut_reset"])
                    return
                self._delay(hits, prm, rec)
                rec["injected"].append("gateway-timeout-after")
                self._send_simple(504, gateway_body(504, "Gateway timeout."))
                return

            self._delay(hits, prm, rec)
            slow = None
            if hits["slow-body"]:
                rec["injected"].append("slow-body")
                slow = (prm["slow_chunked"], prm["slow_total"], prm["slow_piece"])
            self._relay_answer(ans, slow)
        finally:
            ans.close()


# --------------------------------------------------------------------------

class _Stop(Exception):
    pass


def main(argv=None):
    cfg = Config(sys.argv[1:] if argv is None else argv)
    try:
        log = JsonLog(cfg.log_path)
    except OSError as e:
        sys.stderr.write("weather_proxy: cannot open --log file: %s\n" % e.strerror)
        return 2
    try:
        server = WeatherServer(cfg, log)
    except OSError as e:
        sys.stderr.write("weather_proxy: cannot bind 127.0.0.1:%d: %s; choose another --port\n"
                         % (cfg.port, e.strerror))
        return 2

    def stop(signum, frame):
        raise _Stop()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    sys.stdout.write("listening on http://127.0.0.1:%d\n" % server.server_address[1])
    sys.stdout.flush()
    try:
        server.serve_forever(poll_interval=0.2)
    except _Stop:
        pass
    finally:
        try:
            server.server_close()
        except Exception:
            pass
        log.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
