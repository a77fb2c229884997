#!/usr/bin/env python3
"""Offline tests for weather_proxy.py.  Run: python3 -m unittest -v test_weather_proxy

Each test starts the proxy as a real subprocess in front of a tiny fake
upstream on 127.0.0.1 and talks to it with http.client.
"""

import email.utils
import http.client
import json
import os
import select
import signal
import socket
import socketserver
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))
PROXY = os.path.join(HERE, "weather_proxy.py")
sys.path.insert(0, HERE)
import weather_proxy  # noqa: E402  (for the operation table)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def server_bind(self):  # no getfqdn()
        socketserver.TCPServer.server_bind(self)
        self.server_name = "127.0.0.1"
        self.server_port = self.server_address[1]


# ------------------------------------------------------------------ fake upstream

class FakeUpstream:
    def __init__(self):
        self.lock = threading.Lock()
        self.requests = []
        self.callbacks_sent = []
        self.reject_rewritten_callback = False
        outer = self

        class H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def __getattr__(self, name):
                if name.startswith("do_"):
                    return self.handle_any
                raise AttributeError(name)

            def handle_any(self):
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n) if n else b""
                with outer.lock:
                    outer.requests.append({"method": self.command, "path": self.path,
                                           "headers": list(self.headers.items()),
                                           "body": body})
                path = self.path.split("?")[0]
                cb = self.headers.get("X-Callback-Url")
                if self.command == "POST" and path in (
                        "/collection/v1_0/requesttopay", "/disbursement/v1_0/deposit"):
                    if (cb and outer.reject_rewritten_callback
                            and "__weather_callback" in cb):
                        self.reply(500, json.dumps({
                            "code": "INVALID_CALLBACK_URL_HOST",
                            "message": "Callback URL does not match the configured value."
                        }).encode(), ctype="application/json")
                        return
                    self.reply(202, b"")
                    if cb:
                        threading.Thread(target=outer.send_callback, args=(cb,),
                                         daemon=True).start()
                    return
                if path.startswith("/chunked"):
                    self.send_response(200)
                    self.send_header("Content-Type", "text/plain")
                    self.send_header("Transfer-Encoding", "chunked")
                    self.end_headers()
                    for part in (b"hello ", b"chunked ", b"world"):
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
                    self.wfile.write(b"0\r\n\r\n")
                    return
                if path.startswith("/big"):
                    self.reply(200, bytes(range(256)) * 4, ctype="application/octet-stream")
                    return
                payload = json.dumps({"echo": self.path, "method": self.command,
                                      "len": len(body)}).encode()
                self.reply(200, payload, ctype="application/json",
                           extra=[("X-Upstream", "fake"), ("Set-Cookie", "a=1"),
                                  ("Set-Cookie", "b=2")])

            def reply(self, status, body, ctype=None, extra=()):
                self.send_response(status)
                if ctype:
                    self.send_header("Content-Type", ctype)
                for k, v in extra:
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)

        self.server = _Server(("127.0.0.1", 0), H)
        self.port = self.server.server_address[1]
        self.url = "http://127.0.0.1:%d" % self.port
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    CALLBACK_BODY = json.dumps({"financialTransactionId": "1", "status": "SUCCESSFUL",
                                "amount": "5", "currency": "EUR"}).encode()

    def send_callback(self, url):
        time.sleep(0.05)
        parts = __import__("urllib.parse").parse.urlsplit(url)
        conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=5)
        path = parts.path + ("?" + parts.query if parts.query else "")
        with self.lock:
            self.callbacks_sent.append((time.time(), url))
        try:
            conn.request("PUT", path, body=self.CALLBACK_BODY,
                         headers={"Content-Type": "application/json"})
            conn.getresponse().read()
        except OSError:
            pass
        finally:
            conn.close()

    def count(self):
        with self.lock:
            return len(self.requests)

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class Listener:
    """The client's own callback listener."""

    def __init__(self):
        self.lock = threading.Lock()
        self.got = []
        outer = self

        class H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def handle_any(self):
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n)
                with outer.lock:
                    outer.got.append((time.time(), self.command, self.path, body,
                                      self.headers.get("Host")))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()
            do_PUT = do_POST = handle_any

        self.server = _Server(("127.0.0.1", 0), H)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def wait(self, count, timeout):
        end = time.time() + timeout
        while time.time() < end:
            with self.lock:
                if len(self.got) >= count:
                    return list(self.got)
            time.sleep(0.02)
        with self.lock:
            return list(self.got)

    def close(self):
        self.server.shutdown()
        self.server.server_close()


# ------------------------------------------------------------------ proxy process

class Proxy:
    def __init__(self, upstream_url, *args, log=True):
        self.logfile = None
        argv = [sys.executable, PROXY, "--upstream", upstream_url, "--port", "0"]
        if log:
            fd, self.logfile = tempfile.mkstemp(suffix=".jsonl")
            os.close(fd)
            argv += ["--log", self.logfile]
        argv += list(args)
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        ready, _, _ = select.select([self.proc.stdout], [], [], 10)
        if not ready:
            self.proc.kill()
            raise RuntimeError("proxy did not start")
        line = self.proc.stdout.readline().decode()
        self.started = time.monotonic()
        if not line.startswith("listening on http://127.0.0.1:"):
            err = self.proc.stderr.read().decode()
            raise RuntimeError("bad first line %r %s" % (line, err))
        self.first_line = line
        self.port = int(line.strip().rsplit(":", 1)[1])

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc.stdout.close()
        self.proc.stderr.close()
        if self.logfile:
            os.unlink(self.logfile)

    def log(self):
        with open(self.logfile) as fh:
            return [json.loads(line) for line in fh if line.strip()]

    def requests_log(self):
        return sorted((r for r in self.log() if "n" in r), key=lambda r: r["n"])


def call(port, method, path, body=None, headers=None, timeout=10):
    """Returns (status, headers list, body, elapsed) or (exception, None, None, elapsed)."""
    t0 = time.monotonic()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        r = conn.getresponse()
        data = r.read()
        return r.status, r.getheaders(), data, time.monotonic() - t0
    except (http.client.HTTPException, ConnectionError, OSError) as e:
        return e, None, None, time.monotonic() - t0
    finally:
        conn.close()


def hget(headers, name):
    vals = [v for k, v in headers if k.lower() == name.lower()]
    return vals


RTP = "/collection/v1_0/requesttopay"
RTP_BODY = json.dumps({"amount": "5", "currency": "EUR", "externalId": "1",
                       "payer": {"partyIdType": "MSISDN", "partyId": "46733123459"},
                       "payerMessage": "m", "payeeNote": "n"}).encode()
QUICK = ("gateway-unavailable", "gateway-timeout-after", "internal-error",
         "cut-before", "cut-after", "callback-late", "callback-repeated")

# One sample request per operation of the spec, plus status queries.
SAMPLES = {
    1: ("POST", "/collection/token/"),
    2: ("POST", RTP),
    3: ("POST", RTP + "/3fa85f64-5717-4562-b3fc-2c963f66afa6/deliverynotification"),
    4: ("GET", "/collection/v1_0/account/balance/EUR"),
    5: ("GET", "/collection/v1_0/accountholder/msisdn/46733123450/basicuserinfo"),
    6: ("GET", "/collection/oauth2/v1_0/userinfo"),
    7: ("POST", "/collection/v1_0/bc-authorize"),
    8: ("GET", "/collection/v1_0/accountholder/msisdn/46733123450/active"),
    9: ("POST", "/disbursement/v1_0/refund"),
    10: ("POST", "/disbursement/v1_0/deposit"),
    11: ("POST", "/disbursement/oauth2/token/"),
    12: ("GET", "/disbursement/v1_0/accountholder/msisdn/46733123450/active"),
    13: ("GET", "/remittance/v1_0/account/balance"),
    14: ("POST", "/v1_0/apiuser"),
    15: ("POST", "/v1_0/apiuser/3fa85f64-5717-4562-b3fc-2c963f66afa6/apikey"),
    16: ("GET", "/v1_0/apiuser/3fa85f64-5717-4562-b3fc-2c963f66afa6"),
    17: ("GET", RTP + "/3fa85f64-5717-4562-b3fc-2c963f66afa6"),
    18: ("GET", "/disbursement/v1_0/refund/3fa85f64-5717-4562-b3fc-2c963f66afa6"),
    19: ("GET", "/disbursement/v1_0/deposit/3fa85f64-5717-4562-b3fc-2c963f66afa6"),
}
ALLOWED_500 = {2, 4, 8, 9, 10, 12, 13}


class Base(unittest.TestCase):
    def setUp(self):
        self.up = FakeUpstream()
        self.proxies = []

    def tearDown(self):
        for p in self.proxies:
            p.stop()
        self.up.close()

    def proxy(self, *args):
        p = Proxy(self.up.url, *args)
        self.proxies.append(p)
        return p


# ------------------------------------------------------------------ tests

class ForwardingTests(Base):
    def test_forwarding_unchanged_without_conditions(self):
        p = self.proxy()
        body = b'{"amount":"5","currency":"EUR"}'
        hdrs = {"Authorization": "Bearer abc", "X-Reference-Id": "ref-1",
                "X-Target-Environment": "sandbox", "Ocp-Apim-Subscription-Key": "k",
                "Content-Type": "application/json", "X-Custom": "  v a l  ",
                "Connection": "X-Hop", "X-Hop": "secret", "Keep-Alive": "timeout=5"}
        st, rh, data, _ = call(p.port, "PATCH", "/any/path/x?q=1&r=%20z", body, hdrs)
        self.assertEqual(st, 200)
        seen = self.up.requests[-1]
        self.assertEqual(seen["method"], "PATCH")
        self.assertEqual(seen["path"], "/any/path/x?q=1&r=%20z")
        self.assertEqual(seen["body"], body)
        names = {k.lower(): v for k, v in seen["headers"]}
        for k, v in hdrs.items():
            if k.lower() in ("connection", "x-hop", "keep-alive"):
                self.assertNotIn(k.lower(), names)
            else:
                self.assertEqual(names[k.lower()], v.strip())
        self.assertEqual(names["host"], "127.0.0.1:%d" % p.port)
        self.assertEqual(json.loads(data), {"echo": "/any/path/x?q=1&r=%20z",
                                            "method": "PATCH", "len": len(body)})
        self.assertEqual(hget(rh, "X-Upstream"), ["fake"])
        self.assertEqual(hget(rh, "Set-Cookie"), ["a=1", "b=2"])
        # chunked upstream answer, HEAD, large body, keep-alive
        st, rh, data, _ = call(p.port, "GET", "/chunked")
        self.assertEqual((st, data), (200, b"hello chunked world"))
        st, rh, data, _ = call(p.port, "HEAD", "/x")
        self.assertEqual((st, data), (200, b""))
        self.assertTrue(hget(rh, "Content-Length"))
        st, rh, data, _ = call(p.port, "GET", "/big")
        self.assertEqual(data, bytes(range(256)) * 4)
        conn = http.client.HTTPConnection("127.0.0.1", p.port, timeout=5)
        for i in range(3):
            conn.request("GET", "/ka/%d" % i)
            r = conn.getresponse()
            self.assertEqual(json.loads(r.read())["echo"], "/ka/%d" % i)
        conn.close()
        st, rh, data, _ = call(p.port, "POST", RTP, RTP_BODY,
                               {"X-Callback-Url": "http://127.0.0.1:1/cb"})
        self.assertEqual((st, data), (202, b""))
        self.assertEqual(dict(self.up.requests[-1]["headers"])["X-Callback-Url"],
                         "http://127.0.0.1:1/cb")
        log = p.requests_log()
        self.assertTrue(all(r["injected"] == [] for r in log))
        self.assertEqual(log[0]["method"], "PATCH")
        self.assertEqual(log[0]["path"], "/any/path/x?q=1&r=%20z")
        self.assertEqual(log[0]["upstream_status"], 200)

    def test_rewrite_host(self):
        p = self.proxy("--rewrite-host")
        call(p.port, "GET", "/h")
        self.assertEqual(dict(self.up.requests[-1]["headers"])["Host"],
                         "127.0.0.1:%d" % self.up.port)

    def test_chunked_request_body_and_413(self):
        p = self.proxy()
        conn = http.client.HTTPConnection("127.0.0.1", p.port, timeout=5)
        conn.request("POST", "/echo", body=iter([b"ab", b"cd"]),
                     headers={"Transfer-Encoding": "chunked"}, encode_chunked=True)
        r = conn.getresponse()
        r.read()
        conn.close()
        self.assertEqual(self.up.requests[-1]["body"], b"abcd")
        n = self.up.count()
        st, _, _, _ = call(p.port, "POST", "/echo", b"x" * (1024 * 1024 + 1))
        self.assertEqual(st, 413)
        self.assertEqual(self.up.count(), n)
        st, _, _, _ = call(p.port, "POST", "/echo", b"x" * (1024 * 1024))
        self.assertEqual(st, 200)


class ConditionTests(Base):
    def test_gateway_unavailable(self):
        p = self.proxy("--conditions", "gateway-unavailable=1")
        for i in range(4):
            st, rh, data, _ = call(p.port, "POST", RTP, RTP_BODY)
            self.assertEqual(st, 503)
            self.assertEqual(len(hget(rh, "Retry-After")), 1)
            self.assertEqual(json.loads(data)["statusCode"], 503)
        self.assertEqual(self.up.count(), 0)
        self.assertTrue(all(r["injected"] == ["gateway-unavailable"]
                            for r in p.requests_log()))

    def test_retry_after_forms(self):
        p = self.proxy("--conditions", "gateway-unavailable=1", "--seed", "3")
        deltas, dates = set(), 0
        for i in range(1, 13):
            st, rh, _, _ = call(p.port, "GET", "/x")
            ra = hget(rh, "Retry-After")[0]
            if i % 2:
                self.assertIn(ra, ("0", "1"))
                deltas.add(ra)
            else:
                dt = email.utils.parsedate_to_datetime(ra)
                self.assertTrue(ra.endswith(" GMT"), ra)
                ahead = dt.timestamp() - time.time()
                self.assertGreaterEqual(ahead, 0.7, ra)
                self.assertLessEqual(ahead, 3.1, ra)
                dates += 1
        self.assertEqual(deltas, {"0", "1"})
        self.assertEqual(dates, 6)

    def test_gateway_timeout_after_really_forwarded(self):
        p = self.proxy("--conditions", "gateway-timeout-after=1")
        st, rh, data, _ = call(p.port, "POST", RTP, RTP_BODY,
                               {"X-Reference-Id": "r-504"})
        self.assertEqual(st, 504)
        self.assertEqual(json.loads(data)["statusCode"], 504)
        self.assertEqual(self.up.count(), 1)
        seen = self.up.requests[0]
        self.assertEqual((seen["method"], seen["path"], seen["body"]),
                         ("POST", RTP, RTP_BODY))
        self.assertEqual(dict(seen["headers"])["X-Reference-Id"], "r-504")
        rec = p.requests_log()[0]
        self.assertEqual(rec["injected"], ["gateway-timeout-after"])
        self.assertEqual(rec["upstream_status"], 202)

    def test_internal_error_only_where_table_allows(self):
        p = self.proxy("--conditions", "internal-error=1")
        key = {"Ocp-Apim-Subscription-Key": "k"}
        for num, (method, path) in sorted(SAMPLES.items()):
            before = self.up.count()
            st, rh, data, _ = call(p.port, method, path,
                                   b"{}" if method == "POST" else None, key)
            if num in ALLOWED_500:
                self.assertEqual(st, 500, num)
                self.assertEqual(json.loads(data)["code"], "INTERNAL_PROCESSING_ERROR")
                self.assertEqual(set(json.loads(data)), {"code", "message"})
                self.assertEqual(self.up.count(), before, num)
            else:
                self.assertNotEqual(st, 500, num)
                self.assertEqual(self.up.count(), before + 1, num)
        # unknown paths and near-misses are never given a 500
        for method, path in (("GET", "/nothing"), ("POST", RTP + "/"),
                             ("GET", RTP), ("PUT", RTP)):
            st, _, _, _ = call(p.port, method, path, None, key)
            self.assertNotEqual(st, 500, path)
        # without a subscription key the gateway would answer 401 first
        st, _, _, _ = call(p.port, "POST", RTP, b"{}")
        self.assertEqual(st, 202)
        # the table in the code is the one the tests (and README) state
        allowed = {op.number for op in weather_proxy.OPERATIONS if op.internal_error}
        self.assertEqual(allowed, ALLOWED_500)

    def test_cut_before(self):
        p = self.proxy("--conditions", "cut-before=1")
        for i in range(4):
            st, _, _, _ = call(p.port, "POST", RTP, RTP_BODY)
            self.assertIsInstance(st, Exception)
        self.assertEqual(self.up.count(), 0)
        self.assertTrue(all(r["injected"] == ["cut-before"] for r in p.requests_log()))

    def test_cut_after(self):
        p = self.proxy("--conditions", "cut-after=1")
        for i in range(4):
            st, _, _, _ = call(p.port, "POST", RTP, RTP_BODY)
            self.assertIsInstance(st, Exception)
        self.assertEqual(self.up.count(), 4)
        self.assertTrue(all(r["injected"] == ["cut-after"] and r["upstream_status"] == 202
                            for r in p.requests_log()))

    def test_latency(self):
        p = self.proxy("--conditions", "latency=1")
        for i in range(3):
            st, _, data, el = call(p.port, "GET", "/lat/%d" % i)
            self.assertEqual(st, 200)
            self.assertEqual(json.loads(data)["echo"], "/lat/%d" % i)
            self.assertGreaterEqual(el, 0.05)
            self.assertLess(el, 2.5)
        self.assertTrue(all(r["injected"] == ["latency"] for r in p.requests_log()))

    def test_slow_body(self):
        p = self.proxy("--conditions", "slow-body=1")
        framings = set()
        for i in range(6):
            st, rh, data, el = call(p.port, "GET", "/big")
            self.assertEqual(st, 200)
            self.assertEqual(data, bytes(range(256)) * 4)
            self.assertGreaterEqual(el, 0.25)
            self.assertLess(el, 2.0)
            te, cl = hget(rh, "Transfer-Encoding"), hget(rh, "Content-Length")
            self.assertTrue(bool(te) != bool(cl))  # exactly one framing
            if cl:
                self.assertEqual(cl, ["1024"])
            framings.add("chunked" if te else "length")
        self.assertEqual(framings, {"chunked", "length"})
        self.assertTrue(all(r["injected"] == ["slow-body"] for r in p.requests_log()))

    def _callback_run(self, conds, expected):
        lis = Listener()
        try:
            p = self.proxy("--conditions", conds)
            cb = "http://127.0.0.1:%d/my/cb?x=1" % lis.port
            st, _, _, _ = call(p.port, "POST", RTP, RTP_BODY, {"X-Callback-Url": cb})
            self.assertEqual(st, 202)
            given = dict(self.up.requests[-1]["headers"])["X-Callback-Url"]
            self.assertTrue(given.startswith("http://127.0.0.1:%d/__weather_callback/"
                                             % p.port), given)
            lis.wait(expected, 6)
            time.sleep(0.3)
            return p, lis.wait(expected + 1, 0)
        finally:
            lis.close()

    def test_callback_late(self):
        p, got = self._callback_run("callback-late=1", 1)
        self.assertEqual(len(got), 1)
        t, method, path, body, host = got[0]
        self.assertEqual((method, path, body), ("PUT", "/my/cb?x=1", FakeUpstream.CALLBACK_BODY))
        self.assertTrue(host.startswith("127.0.0.1:"))
        sent = self.up.callbacks_sent[0][0]
        self.assertGreaterEqual(t - sent, 0.45)
        self.assertEqual(p.requests_log()[0]["injected"], ["callback-late"])

    def test_callback_repeated(self):
        p, got = self._callback_run("callback-repeated=1", 2)
        self.assertEqual(len(got), 2)
        self.assertEqual(got[0][1:4], got[1][1:4])
        self.assertEqual(got[0][2], "/my/cb?x=1")
        self.assertEqual(p.requests_log()[0]["injected"], ["callback-repeated"])

    def test_callback_rewrite_refused_is_resent_unchanged(self):
        self.up.reject_rewritten_callback = True
        p = self.proxy("--conditions", "callback-late=1")
        cb = "http://127.0.0.1:9/cb"
        st, _, data, _ = call(p.port, "POST", RTP, RTP_BODY, {"X-Callback-Url": cb})
        self.assertEqual((st, data), (202, b""))
        self.assertEqual(self.up.count(), 2)
        self.assertEqual(dict(self.up.requests[1]["headers"])["X-Callback-Url"], cb)
        self.assertEqual(p.requests_log()[0]["injected"], [])

    def test_callback_not_rewritten_for_foreign_host(self):
        p = self.proxy("--conditions", "callback-late=1,callback-repeated=1")
        for cb in ("http://example.invalid/cb", "https://127.0.0.1:1/cb"):
            call(p.port, "POST", RTP, RTP_BODY, {"X-Callback-Url": cb})
            self.assertEqual(dict(self.up.requests[-1]["headers"])["X-Callback-Url"], cb)
        call(p.port, "POST", "/collection/token/", None,
             {"X-Callback-Url": "http://127.0.0.1:1/cb"})
        self.assertEqual(dict(self.up.requests[-1]["headers"])["X-Callback-Url"],
                         "http://127.0.0.1:1/cb")

    def _mixed_requests(self, p, count, cb_port=1):
        out = []
        for i in range(count):
            method, path = [("POST", RTP), ("GET", "/collection/v1_0/account/balance/EUR"),
                            ("POST", "/collection/token/")][i % 3]
            hdr = {"Ocp-Apim-Subscription-Key": "k"}
            if i % 3 == 0:
                hdr["X-Callback-Url"] = "http://127.0.0.1:%d/cb" % cb_port
            st, _, _, _ = call(p.port, method, path, b"{}" if method == "POST" else None, hdr)
            out.append(st if isinstance(st, int) else "cut")
        return out

    def test_rate_zero_never(self):
        p = self.proxy("--conditions", "all=0")
        sts = self._mixed_requests(p, 15)
        self.assertEqual(sts, [202, 200, 200] * 5)
        self.assertTrue(all(r["injected"] == [] for r in p.requests_log()))
        self.assertEqual(self.up.count(), 15)
        # each condition at 0 while the others blow
        lis = Listener()
        try:
            for cond in weather_proxy.CONDITIONS:
                others = [c for c in QUICK if c != cond]
                spec = ",".join("%s=0.6" % c for c in others) + ",%s=0" % cond
                q = self.proxy("--conditions", spec, "--seed", "5")
                self._mixed_requests(q, 18, lis.port)
                log = q.requests_log()
                self.assertEqual(len(log), 18)
                self.assertFalse(any(cond in r["injected"] for r in log), cond)
                self.assertTrue(any(r["injected"] for r in log), cond)
        finally:
            lis.close()


class DeterminismTests(Base):
    def run_once(self, seed):
        spec = ",".join("%s=0.4" % c for c in QUICK)
        p = self.proxy("--conditions", spec, "--seed", str(seed))
        sts = []
        for i in range(30):
            method, path = [("POST", RTP), ("GET", "/collection/v1_0/account/balance/EUR"),
                            ("GET", "/x")][i % 3]
            st, _, _, _ = call(p.port, method, path, b"{}" if method == "POST" else None,
                               {"Ocp-Apim-Subscription-Key": "k"})
            sts.append(st if isinstance(st, int) else "cut")
        return sts, [r["injected"] for r in p.requests_log()]

    def test_same_seed_same_weather(self):
        a = self.run_once(11)
        b = self.run_once(11)
        c = self.run_once(12)
        self.assertEqual(a, b)
        self.assertNotEqual(a[1], c[1])
        self.assertTrue(any(x for x in a[1]))


class BurstTests(Base):
    def test_burst_timing(self):
        p = self.proxy("--burst-every", "1", "--burst-length", "0.4", "--seed", "1")
        results = []
        end = p.started + 3.3
        i = 0
        while time.monotonic() < end:
            method, path = [("GET", "/collection/v1_0/account/balance/EUR"),
                            ("POST", "/collection/token/")][i % 2]
            t = time.monotonic() - p.started
            st, rh, data, _ = call(p.port, method, path, None,
                                   {"Ocp-Apim-Subscription-Key": "k"})
            results.append((t, path, st, rh, data))
            i += 1
            time.sleep(0.02)
        bursts_seen = set()
        for t, path, st, rh, data in results:
            # client-side clock: loose windows (the proxy started a little earlier)
            in_window = any(k - 0.3 <= t < k + 0.45 for k in (1, 2, 3))
            outage = st != 200
            if outage:
                self.assertTrue(in_window, (t, st))
                bursts_seen.add(int(t + 0.3))
                if st == 503:
                    ra = hget(rh, "Retry-After")[0]
                    if ra.isdigit():
                        self.assertEqual(ra, "1")
                    else:
                        email.utils.parsedate_to_datetime(ra)
                else:
                    self.assertEqual(st, 500)
                    self.assertEqual(path, "/collection/v1_0/account/balance/EUR")
                    self.assertEqual(json.loads(data)["code"], "INTERNAL_PROCESSING_ERROR")
        self.assertEqual(bursts_seen, {1, 2, 3})
        # proxy-side clock (the log's "t"): outage exactly inside [k, k+0.4)
        log = p.requests_log()
        self.assertEqual(len(log), len(results))
        for r in log:
            t = r["t"]
            expect = t >= 1 and (t % 1.0) < 0.4
            if abs((t % 1.0) - 0.4) > 0.002 and abs((t % 1.0) - 1.0) > 0.002 \
                    and (t % 1.0) > 0.002:
                self.assertEqual("outage" in r["injected"], expect, r)
        per_burst = {}
        for r in log:
            if "outage" in r["injected"]:
                per_burst.setdefault(r["burst"], []).append(r["t"])
        self.assertEqual(set(per_burst), {1, 2, 3})
        for k, ts in per_burst.items():
            self.assertLess(max(ts) - min(ts), 0.4)
        # outage answers are not forwarded
        self.assertEqual(self.up.count(), sum(1 for r in results if r[2] == 200))

    def test_burst_options(self):
        for args in (["--burst-every", "10", "--burst-length", "3.5"],
                     ["--burst-length", "1"],
                     ["--burst-every", "1", "--burst-length", "1"],
                     ["--burst-every", "0"]):
            r = subprocess.run([sys.executable, PROXY, "--upstream", self.up.url] + args,
                               capture_output=True, timeout=10)
            self.assertEqual(r.returncode, 2, args)
        p = self.proxy("--burst-every", "10", "--burst-length", "3.5", "--allow-long-bursts")
        self.assertTrue(p.port)


class HelperTests(unittest.TestCase):
    def test_callback_url_round_trip(self):
        f = weather_proxy.same_host_other_port
        self.assertEqual(f("LocalHost:9000", 5), "LocalHost:5")
        self.assertEqual(f("127.0.0.1", 5), "127.0.0.1:5")
        orig = "http://localhost:9000/cb/x?y=1"
        path = weather_proxy.encode_callback(700, -1, orig)
        self.assertEqual(weather_proxy.decode_callback(path), (700, -1, orig))
        self.assertEqual(weather_proxy.decode_callback(path + "&z=2"),
                         (700, -1, orig + "&z=2"))
        self.assertIsNone(weather_proxy.callback_rewritable("https://localhost/cb"))
        self.assertIsNone(weather_proxy.callback_rewritable("http://example.com/cb"))


class CommandLineTests(unittest.TestCase):
    def test_bad_options_exit_2(self):
        bad = [
            [],
            ["--upstream", "ftp://x"],
            ["--upstream", "http://127.0.0.1:1", "--conditions", "rain=1"],
            ["--upstream", "http://127.0.0.1:1", "--conditions", "latency=2"],
            ["--upstream", "http://127.0.0.1:1", "--conditions", "latency"],
            ["--upstream", "http://127.0.0.1:1", "--conditions", "outage=1"],
            ["--upstream", "http://127.0.0.1:1", "--seed", "x"],
            ["--upstream", "http://127.0.0.1:1", "--port", "70000"],
            ["--upstream", "http://127.0.0.1:1", "--bogus"],
        ]
        for argv in bad:
            r = subprocess.run([sys.executable, PROXY] + argv, capture_output=True,
                               timeout=10)
            self.assertEqual(r.returncode, 2, argv)
            self.assertEqual(r.stdout, b"", argv)
            lines = r.stderr.decode().splitlines()
            self.assertEqual(len(lines), 1, (argv, lines))
            self.assertTrue(lines[0].strip())

    def test_signals_exit_0(self):
        up = FakeUpstream()
        try:
            for sig in (signal.SIGTERM, signal.SIGINT):
                p = Proxy(up.url, "--conditions", "all=0")
                # leave an idle keep-alive connection open
                s = socket.create_connection(("127.0.0.1", p.port))
                s.sendall(b"GET /x HTTP/1.1\r\nHost: a\r\n\r\n")
                time.sleep(0.2)
                p.proc.send_signal(sig)
                rc = p.proc.wait(10)
                self.assertEqual(rc, 0, sig)
                rest = p.proc.stdout.read()
                self.assertEqual(p.first_line + rest.decode(),
                                 "listening on http://127.0.0.1:%d\n" % p.port)
                s.close()
                p.stop()
        finally:
            up.close()


if __name__ == "__main__":
    unittest.main()
