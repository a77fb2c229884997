#!/usr/bin/env python3
"""Self-test for server.py (stdlib only). Usage: python3 selftest.py"""
import base64
import json
import os
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))
KEYS = {"collection": "ck", "disbursement": "dk", "remittance": "rk"}
FAILS = []
PASSES = [0]


def check(cond, what):
    if cond:
        PASSES[0] += 1
    else:
        FAILS.append(what)
        print("  FAIL:", what)


# ---------------------------------------------------------------- receiver
class Receiver:
    def __init__(self):
        self.got = []
        self.lock = threading.Lock()
        rec = self

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def _any(self):
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n) if n else b""
                with rec.lock:
                    rec.got.append((self.command, self.path, json.loads(body) if body else None))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()
            do_PUT = do_POST = _any

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def wait_for(self, path, n=1, timeout=5):
        end = time.time() + timeout
        while time.time() < end:
            with self.lock:
                hits = [g for g in self.got if g[1] == path]
            if len(hits) >= n:
                return hits
            time.sleep(0.05)
        with self.lock:
            return [g for g in self.got if g[1] == path]


# ---------------------------------------------------------------- client
class Client:
    def __init__(self, base):
        self.base = base

    def call(self, method, path, headers=None, body=None, form=False):
        data = None
        h = dict(headers or {})
        if body is not None:
            if form:
                data = body.encode()
                h.setdefault("Content-Type", "application/x-www-form-urlencoded")
            else:
                data = json.dumps(body).encode()
                h.setdefault("Content-Type", "application/json")
        req = urllib.request.Request(self.base + path, data=data, method=method, headers=h)
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                raw = r.read()
                st, hdrs = r.status, r.headers
        except urllib.error.HTTPError as e:
            raw = e.read()
            st, hdrs = e.code, e.headers
        try:
            js = json.loads(raw) if raw else None
        except ValueError:
            js = raw
        return st, js, hdrs


def start(profile, extra=()):
    args = [sys.executable, os.path.join(HERE, "server.py"), "--port", "0", "--profile", profile,
            "--keys", ",".join("%s=%s" % kv for kv in KEYS.items()), "--token-lifetime", "6",
            "--delayed-approval-seconds", "2", "--pending-timeout-seconds", "5"] + list(extra)
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = p.stdout.readline().strip()
    assert line.startswith("listening on http://127.0.0.1:"), line
    return p, Client(line[len("listening on "):])


def stop(p):
    p.terminate()
    try:
        p.wait(3)
    except subprocess.TimeoutExpired:
        p.kill()
        check(False, "server did not exit promptly on SIGTERM")


def provision(c, product, host="127.0.0.1"):
    uid = str(uuid.uuid4())
    sk = {"Ocp-Apim-Subscription-Key": KEYS[product]}
    st, _, _ = c.call("POST", "/v1_0/apiuser", dict(sk, **{"X-Reference-Id": uid}), {"providerCallbackHost": host})
    assert st == 201, st
    st, js, _ = c.call("POST", "/v1_0/apiuser/%s/apikey" % uid, sk)
    assert st == 201, st
    return uid, js["apiKey"]


def token(c, product, uid, key):
    basic = base64.b64encode(("%s:%s" % (uid, key)).encode()).decode()
    return c.call("POST", "/%s/token/" % product,
                  {"Ocp-Apim-Subscription-Key": KEYS[product], "Authorization": "Basic " + basic})


def bh(product, tok, **extra):
    h = {"Ocp-Apim-Subscription-Key": KEYS[product], "Authorization": "Bearer " + tok,
         "X-Target-Environment": "sandbox"}
    h.update({k.replace("_", "-"): v for k, v in extra.items()})
    return h


def rtp_body(msisdn, amount="12.50"):
    return {"amount": amount, "currency": "EUR", "externalId": "ext-1",
            "payer": {"partyIdType": "MSISDN", "partyId": msisdn},
            "payerMessage": "pay", "payeeNote": "note"}


# ---------------------------------------------------------------- scenario
def run_profile(profile, rx):
    print("== profile", profile)
    mtn = profile == "mtn-sandbox"
    p, c = start(profile)
    try:
        cb_base = "http://127.0.0.1:%d" % rx.port
        # provisioning
        uid, key = provision(c, "collection")
        sk = {"Ocp-Apim-Subscription-Key": "ck"}
        st, js, _ = c.call("POST", "/v1_0/apiuser", dict(sk, **{"X-Reference-Id": uid}), {"providerCallbackHost": "x"})
        check(st == 409 and js["code"] == "RESOURCE_ALREADY_EXIST", "duplicate api user 409")
        st, _, _ = c.call("POST", "/v1_0/apiuser", dict(sk, **{"X-Reference-Id": "abc"}), {"providerCallbackHost": "x"})
        check(st == 400, "non-uuid api user 400")
        st, _, _ = c.call("POST", "/v1_0/apiuser", dict(sk, **{"X-Reference-Id": str(uuid.uuid4())}), {})
        check(st == 400, "missing providerCallbackHost 400")
        st, js, _ = c.call("GET", "/v1_0/apiuser/" + uid, sk)
        check(st == 200 and js["providerCallbackHost"] == "127.0.0.1" and js["targetEnvironment"] == "sandbox", "get api user")
        st, js, _ = c.call("POST", "/v1_0/apiuser/%s/apikey" % uuid.uuid4(), sk)
        check(st == 404 and js["code"] == "RESOURCE_NOT_FOUND", "apikey unknown 404")
        st, _, _ = c.call("GET", "/v1_0/apiuser/" + uid, {"Ocp-Apim-Subscription-Key": "nope"})
        check(st == 401, "bad subscription key 401")
        # tokens
        st, js, hd = token(c, "collection", uid, key)
        check(st == 200 and js["expires_in"] == 6 and js["token_type"] == ("access_token" if mtn else "Bearer"), "token ok")
        check(hd.get("Cache-Control") == "no-store", "token no-store")
        tok = js["access_token"]
        st, js, _ = token(c, "collection", uid, "wrong")
        check(st == (500 if mtn else 401) and js == {"error": "login_failed"}, "token bad key")
        st, js, _ = token(c, "disbursement", uid, key)
        check(st == (500 if mtn else 401), "token on another product refused")
        # request to pay: happy path with callback
        ref = str(uuid.uuid4())
        st, _, _ = c.call("POST", "/collection/v1_0/requesttopay",
                          bh("collection", tok, X_Reference_Id=ref, X_Callback_Url=cb_base + "/cb/" + ref),
                          rtp_body("46733123459"))
        check(st == 202, "rtp 202")
        st, js, _ = c.call("GET", "/collection/v1_0/requesttopay/" + ref, bh("collection", tok))
        check(st == 200 and js["status"] == "SUCCESSFUL" and "financialTransactionId" in js, "rtp successful")
        check(js.get("amount") == ("12.5" if mtn else "12.50"), "rtp amount form")
        hits = rx.wait_for("/cb/" + ref)
        check(len(hits) == 1 and hits[0][0] == ("PUT" if mtn else "POST") and hits[0][2]["status"] == "SUCCESSFUL", "rtp callback")
        st, js, _ = c.call("POST", "/collection/v1_0/requesttopay", bh("collection", tok, X_Reference_Id=ref), rtp_body("46733123459"))
        check(st == 409 and js["code"] == "RESOURCE_ALREADY_EXIST", "rtp duplicate 409")
        st, _, _ = c.call("POST", "/collection/v1_0/requesttopay", bh("collection", tok, X_Reference_Id="nope"), rtp_body("46733123459"))
        check(st == 400, "rtp bad ref 400")
        st, _, _ = c.call("POST", "/collection/v1_0/requesttopay", bh("collection", tok, X_Reference_Id=str(uuid.uuid4())),
                          dict(rtp_body("46733123459"), payer={}))
        check(st == 400, "rtp empty payer 400")
        st, js, _ = c.call("POST", "/collection/v1_0/requesttopay", bh("collection", tok, X_Reference_Id=str(uuid.uuid4())),
                           dict(rtp_body("46733123459"), currency="USD"))
        check(st == 500 and js["code"] == "INVALID_CURRENCY", "rtp USD 500")
        h = bh("collection", tok, X_Reference_Id=str(uuid.uuid4()))
        del h["X-Target-Environment"]
        st, _, _ = c.call("POST", "/collection/v1_0/requesttopay", h, rtp_body("46733123459"))
        check(st == 400, "rtp missing target env 400")
        st, js, _ = c.call("POST", "/collection/v1_0/requesttopay",
                           bh("collection", tok, X_Reference_Id=str(uuid.uuid4()), X_Target_Environment="mtnuganda"),
                           rtp_body("46733123459"))
        check(st == 500 and js["code"] == "NOT_ALLOWED_TARGET_ENVIRONMENT", "rtp wrong env 500")
        st, _, _ = c.call("GET", "/collection/v1_0/requesttopay/" + str(uuid.uuid4()), bh("collection", tok))
        check(st == 404, "rtp status unknown 404")
        if mtn:
            r2 = str(uuid.uuid4())
            st, js, _ = c.call("POST", "/collection/v1_0/requesttopay",
                               bh("collection", tok, X_Reference_Id=r2, X_Callback_Url="http://elsewhere.example/cb"),
                               rtp_body("46733123459"))
            check(st == 500 and js["code"] == "INVALID_CALLBACK_URL_HOST", "callback host mismatch 500")
            st, _, _ = c.call("GET", "/collection/v1_0/requesttopay/" + r2, bh("collection", tok))
            check(st == 404, "refused rtp not created")
        # failing and delayed numbers
        refs = {}
        for num in ("46733123450", "46733123451", "46733123452", "46733123453", "46733123454"):
            r = str(uuid.uuid4())
            refs[num] = r
            st, _, _ = c.call("POST", "/collection/v1_0/requesttopay",
                              bh("collection", tok, X_Reference_Id=r, X_Callback_Url=cb_base + "/cb/" + r), rtp_body(num))
            check(st == 202, "rtp %s 202" % num)
        st, js, _ = c.call("GET", "/collection/v1_0/requesttopay/" + refs["46733123450"], bh("collection", tok))
        reason = js.get("reason")
        check(js["status"] == "FAILED" and (reason == "INTERNAL_PROCESSING_ERROR" if mtn else reason["code"] == "INTERNAL_PROCESSING_ERROR")
              and "financialTransactionId" not in js, "450 FAILED")
        hits = rx.wait_for("/cb/" + refs["46733123451"])
        check(len(hits) == 1 and hits[0][2]["status"] == "FAILED", "451 FAILED callback")
        st, js, _ = c.call("GET", "/collection/v1_0/requesttopay/" + refs["46733123454"], bh("collection", tok))
        check(js["status"] == "PENDING", "454 pending at first")
        # delivery notification on pending -> 409
        st, js, _ = c.call("POST", "/collection/v1_0/requesttopay/%s/deliverynotification" % refs["46733123454"],
                           bh("collection", tok), {"notificationMessage": "hello"})
        check(st == 409, "DN on pending 409")
        st, _, _ = c.call("POST", "/collection/v1_0/requesttopay/%s/deliverynotification" % ref,
                          bh("collection", tok), {"notificationMessage": "x" * 161})
        check(st == 400, "DN too long 400")
        st, _, _ = c.call("POST", "/collection/v1_0/requesttopay/%s/deliverynotification" % ref,
                          bh("collection", tok, Language="en"), {"notificationMessage": "thanks"})
        check(st == 200, "DN 200")
        st, _, _ = c.call("POST", "/collection/v1_0/requesttopay/%s/deliverynotification" % ref,
                          bh("collection", tok), {"notificationMessage": "thanks"})
        check(st == 429, "DN repeat 429")
        st, _, _ = c.call("POST", "/collection/v1_0/requesttopay/%s/deliverynotification" % uuid.uuid4(),
                          bh("collection", tok), {"notificationMessage": "thanks"})
        check(st == 404, "DN unknown 404")
        # balance, account holder, basic info
        st, js, _ = c.call("GET", "/collection/v1_0/account/balance/EUR", bh("collection", tok))
        check(st == 200 and js["currency"] == "EUR" and js["availableBalance"] == ("0" if mtn else "12.5"), "collection balance %r" % (js,))
        st, js, _ = c.call("GET", "/collection/v1_0/account/balance/XYZ", bh("collection", tok))
        check(st == 500 and js["code"] == "INVALID_CURRENCY", "balance unsupported currency")
        st, js, _ = c.call("GET", "/collection/v1_0/accountholder/msisdn/46733123459/active", bh("collection", tok))
        check(st == 200 and js == ({"result": True} if mtn else True), "active")
        st, _, _ = c.call("GET", "/collection/v1_0/accountholder/MSISDN/46733123459/active", bh("collection", tok))
        check(st == 400, "active uppercase type 400")
        st, js, _ = c.call("GET", "/collection/v1_0/accountholder/msisdn/46733123450/active", bh("collection", tok))
        check((st == 404) if mtn else (st == 200 and js is False), "active 450")
        st, js, _ = c.call("GET", "/collection/v1_0/accountholder/msisdn/46733123459/basicuserinfo", bh("collection", tok))
        check(st == 200 and js["given_name"] == "Sand", "basic user info")
        st, js, _ = c.call("GET", "/collection/v1_0/accountholder/msisdn/46733123459/basicuserinfo",
                           bh("collection", "garbage"))
        check(st == 401 and "error" in js, "basic info 401")
        # consent flow
        st, js, _ = c.call("POST", "/collection/v1_0/bc-authorize", bh("collection", tok),
                           "login_hint=ID:46733123459/MSISDN&scope=profile&access_type=offline&consent_valid_in=7200", form=True)
        check(st == 200 and set(js) == {"auth_req_id", "interval", "expires_in"}, "bc-authorize")
        arid = js["auth_req_id"]
        st, js2, _ = c.call("POST", "/collection/v1_0/bc-authorize", bh("collection", tok),
                            "login_hint=ID:46733123459/MSISDN&scope=bogus&access_type=offline", form=True)
        check(st == 400, "bc-authorize unknown scope")
        duid, dkey = provision(c, "disbursement")
        basic = base64.b64encode(("%s:%s" % (duid, dkey)).encode()).decode()
        st, js, _ = c.call("POST", "/disbursement/oauth2/token/",
                           {"Ocp-Apim-Subscription-Key": "dk", "Authorization": "Basic " + basic, "X-Target-Environment": "sandbox"},
                           "grant_type=urn:openid:params:grant-type:ciba&auth_req_id=" + arid, form=True)
        check(st == 200 and js["token_type"] == "Bearer" and js["expires_in"] == 3600 and js["refresh_token_expired_in"] == 7200,
              "oauth2 consent token %r" % (js,))
        ctok = js["access_token"]
        st, js, _ = c.call("GET", "/collection/oauth2/v1_0/userinfo", bh("collection", ctok))
        check(st == 200 and js["family_name"] == "Box", "userinfo")
        st, js, _ = c.call("GET", "/collection/oauth2/v1_0/userinfo", bh("collection", tok))
        check(st == 401, "userinfo with plain access token 401")
        # disbursement: deposit, refund
        st, js, _ = token(c, "disbursement", duid, dkey)
        dtok = js["access_token"]
        dref = str(uuid.uuid4())
        st, _, _ = c.call("POST", "/disbursement/v1_0/deposit",
                          bh("disbursement", dtok, X_Reference_Id=dref, X_Callback_Url=cb_base + "/cb/" + dref),
                          {"amount": "5.0", "currency": "EUR", "externalId": "d1",
                           "payee": {"partyIdType": "MSISDN", "partyId": "46733123459"}, "payerMessage": "m", "payeeNote": "n"})
        check(st == 202, "deposit 202")
        st, js, _ = c.call("GET", "/disbursement/v1_0/deposit/" + dref, bh("disbursement", dtok))
        check(st == 200 and js["status"] == "SUCCESSFUL" and "payee" in js, "deposit status")
        hits = rx.wait_for("/cb/" + dref)
        check(len(hits) == 1 and hits[0][0] == "POST", "deposit callback POST")
        rref = str(uuid.uuid4())
        st, _, _ = c.call("POST", "/disbursement/v1_0/refund", bh("disbursement", dtok, X_Reference_Id=rref),
                          {"amount": "2.5", "currency": "EUR", "externalId": "r1", "payerMessage": "m", "payeeNote": "n",
                           "referenceIdToRefund": ref})
        check(st == 202, "refund 202")
        st, js, _ = c.call("GET", "/disbursement/v1_0/refund/" + rref, bh("disbursement", dtok))
        check(st == 200 and js["status"] == "SUCCESSFUL" and js["payee"]["partyId"] == "46733123459", "refund status %r" % (js,))
        rref2 = str(uuid.uuid4())
        c.call("POST", "/disbursement/v1_0/refund", bh("disbursement", dtok, X_Reference_Id=rref2),
               {"amount": "2.5", "currency": "EUR", "referenceIdToRefund": str(uuid.uuid4())})
        st, js, _ = c.call("GET", "/disbursement/v1_0/refund/" + rref2, bh("disbursement", dtok))
        check(js["status"] == "FAILED", "refund of unknown FAILED")
        st, js, _ = c.call("POST", "/disbursement/v1_0/deposit", bh("collection", tok, X_Reference_Id=str(uuid.uuid4())),
                           {"amount": "5", "currency": "EUR", "payee": {"partyIdType": "MSISDN", "partyId": "46733123459"}})
        check(st == 401, "collection key/token on disbursement 401")
        st, js, _ = c.call("GET", "/remittance/v1_0/account/balance", {"Ocp-Apim-Subscription-Key": "rk"})
        check(st == 401, "remittance balance without token 401")
        ruid, rkey = provision(c, "remittance")
        st, js, _ = token(c, "remittance", ruid, rkey)
        st, js, _ = c.call("GET", "/remittance/v1_0/account/balance", bh("remittance", js["access_token"]))
        check(st == 200 and js["currency"] == "EUR", "remittance balance")
        st, js, _ = c.call("GET", "/disbursement/v1_0/accountholder/email/a@b.example/active", bh("disbursement", dtok))
        check(st == 200, "disbursement active email")
        # other user cannot see the transaction
        uid2, key2 = provision(c, "collection")
        tok2 = token(c, "collection", uid2, key2)[1]["access_token"]
        st, _, _ = c.call("GET", "/collection/v1_0/requesttopay/" + ref, bh("collection", tok2))
        check(st == 404, "other api user 404")
        # timed transitions
        time.sleep(2.3)
        st, js, _ = c.call("GET", "/collection/v1_0/requesttopay/" + refs["46733123454"], bh("collection", tok2))
        st, js, _ = c.call("GET", "/collection/v1_0/requesttopay/" + refs["46733123454"], bh("collection", tok))
        check(js["status"] == "SUCCESSFUL", "454 successful after delay")
        hits = rx.wait_for("/cb/" + refs["46733123454"])
        check(len(hits) == 1 and hits[0][2]["status"] == "SUCCESSFUL", "454 callback")
        st, js, _ = c.call("GET", "/collection/v1_0/requesttopay/" + refs["46733123453"], bh("collection", tok))
        check(js["status"] == "PENDING", "453 still pending")
        time.sleep(3.9)
        st, js, _ = c.call("GET", "/collection/v1_0/requesttopay/" + refs["46733123453"], bh("collection", tok))
        check(st == 401, "token expired after 6 s")
        tok = token(c, "collection", uid, key)[1]["access_token"]
        st, js, _ = c.call("GET", "/collection/v1_0/requesttopay/" + refs["46733123453"], bh("collection", tok))
        check(js["status"] == "FAILED", "453 FAILED after pending timeout")
        hits = rx.wait_for("/cb/" + refs["46733123453"])
        check(len(hits) == 1 and hits[0][2]["status"] == "FAILED", "453 callback")
    finally:
        stop(p)


def run_switches():
    print("== switches")
    for flag in ("--list-controls", "--list-deviations"):
        out = subprocess.run([sys.executable, os.path.join(HERE, "server.py"), flag], capture_output=True, text=True)
        lines = out.stdout.strip().splitlines()
        check(out.returncode == 0 and all(len(l.split("\t")) == 4 for l in lines), flag)
        for l in lines:
            name, prof = l.split("\t")[:2]
            for profile in prof[len("profiles="):].split(","):
                p, c = start(profile, ["--control" if flag == "--list-controls" else "--deviation", name])
                stop(p)
    # a few deviation effects
    p, c = start("spec", ["--deviation", "apiuser-duplicate-201", "--deviation", "duplicate-code-typo"])
    try:
        uid, key = provision(c, "collection")
        st, _, _ = c.call("POST", "/v1_0/apiuser", {"Ocp-Apim-Subscription-Key": "ck", "X-Reference-Id": uid}, {"providerCallbackHost": "h"})
        check(st == 201, "deviation apiuser-duplicate-201 visible")
        tok = token(c, "collection", uid, key)[1]["access_token"]
        r = str(uuid.uuid4())
        c.call("POST", "/collection/v1_0/requesttopay", bh("collection", tok, X_Reference_Id=r), rtp_body("46733123459"))
        st, js, _ = c.call("POST", "/collection/v1_0/requesttopay", bh("collection", tok, X_Reference_Id=r), rtp_body("46733123459"))
        check(st == 409 and js["code"] == "RESOURCE_ALREADY_EXISTS", "deviation duplicate-code-typo visible")
    finally:
        stop(p)
    p, c = start("spec", ["--deviation", "balance-float-arithmetic"])
    try:
        uid, key = provision(c, "collection")
        tok = token(c, "collection", uid, key)[1]["access_token"]
        for a in ("0.1", "0.2"):
            c.call("POST", "/collection/v1_0/requesttopay", bh("collection", tok, X_Reference_Id=str(uuid.uuid4())), rtp_body("46733123459", a))
        st, js, _ = c.call("GET", "/collection/v1_0/account/balance/EUR", bh("collection", tok))
        check(js["availableBalance"] == "0.30000000000000004", "deviation balance-float-arithmetic visible")
    finally:
        stop(p)
    p, c = start("spec", ["--control", "amount-max-2-decimals", "--control", "accepted-body"])
    try:
        uid, key = provision(c, "collection")
        tok = token(c, "collection", uid, key)[1]["access_token"]
        st, _, _ = c.call("POST", "/collection/v1_0/requesttopay", bh("collection", tok, X_Reference_Id=str(uuid.uuid4())), rtp_body("46733123459", "1.005"))
        check(st == 400, "control amount-max-2-decimals")
        st, js, _ = c.call("POST", "/collection/v1_0/requesttopay", bh("collection", tok, X_Reference_Id=str(uuid.uuid4())), rtp_body("46733123459", "1.05"))
        check(st == 202 and js["status"] == "PENDING", "control accepted-body")
    finally:
        stop(p)


# ---------------------------------------------------------------- per-switch effects
def setup(c, product="collection", host="127.0.0.1"):
    uid, key = provision(c, product, host)
    return uid, key, token(c, product, uid, key)[1]["access_token"]


def rtp(c, tok, num="46733123459", cb=None, ref=None, body=None, **hdr):
    ref = ref or str(uuid.uuid4())
    h = bh("collection", tok, X_Reference_Id=ref, **hdr)
    if cb:
        h["X-Callback-Url"] = cb
    st, js, _ = c.call("POST", "/collection/v1_0/requesttopay", h, body or rtp_body(num))
    return ref, st, js


def status(c, tok, ref, kind="requesttopay", product="collection"):
    return c.call("GET", "/%s/v1_0/%s/%s" % (product, kind, ref), bh(product, tok))[1]


class FlakyReceiver(Receiver):
    """Answers 500 to the first attempt on each path."""
    def __init__(self):
        super().__init__()
        rec = self
        seen = set()

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def _any(self):
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n) if n else b""
                with rec.lock:
                    rec.got.append((self.command, self.path, json.loads(body) if body else None))
                    first = self.path not in seen
                    seen.add(self.path)
                self.send_response(500 if first else 200)
                self.send_header("Content-Length", "0")
                self.end_headers()
            do_PUT = do_POST = _any
        self.httpd.shutdown()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()


def run_effects(rx):
    print("== switch effects")
    cbu = lambda path: "http://127.0.0.1:%d%s" % (rx.port, path)

    gate = threading.BoundedSemaphore(12)   # at most 12 servers at a time (light on CPU)

    def with_server(profile, kind, name, fn, plain=False):
        with gate:
            p, c = start(profile, [] if plain else ["--" + kind, name])
            try:
                ok = fn(c)
            except Exception as exc:
                ok = False
                print("   exception", name, profile, "(plain server)" if plain else "", repr(exc))
            finally:
                stop(p)
        if plain:
            # the same scenario against a server without the switch: the default must not show it
            check(not ok, "default unchanged: %s %s not seen without the switch (%s)" % (kind, name, profile))
        else:
            check(ok, "%s %s (%s)" % (kind, name, profile))

    def d_apiuser_non_uuid(c):
        st, _, _ = c.call("POST", "/v1_0/apiuser", {"Ocp-Apim-Subscription-Key": "ck", "X-Reference-Id": "not-a-uuid"},
                          {"providerCallbackHost": "h"})
        return st == 201

    def d_token_expiry(c):
        uid, key, tok = setup(c)
        time.sleep(6.3)
        return status(c, tok, rtp(c, tok)[0])["status"] == "SUCCESSFUL"

    def d_token_500(c):
        uid, key, tok = setup(c)
        return token(c, "collection", uid, "bad")[0] == 500

    def d_token_key(c):
        uid, key, tok = setup(c)
        return token(c, "collection", uid, "bad")[0] == 200

    def d_rtp_overwrite(c):
        uid, key, tok = setup(c)
        ref, _, _ = rtp(c, tok)
        _, st, _ = rtp(c, tok, num="46733123450", ref=ref)
        return st == 202 and status(c, tok, ref)["status"] == "FAILED"

    def d_refused_reserved(c):
        uid, key, tok = setup(c)
        ref, st, _ = rtp(c, tok, body=dict(rtp_body("46733123459"), currency="USD"))
        _, st2, _ = rtp(c, tok, ref=ref)
        return st == 500 and st2 == 409

    def d_cb_failed(c):
        P_dev1_a = "/dev1/a-" + uuid.uuid4().hex
        P_dev1_b = "/dev1/b-" + uuid.uuid4().hex
        uid, key, tok = setup(c)
        r1, _, _ = rtp(c, tok, num="46733123450", cb=cbu(P_dev1_a))
        r2, _, _ = rtp(c, tok, cb=cbu(P_dev1_b))
        return len(rx.wait_for(P_dev1_b)) == 1 and len(rx.wait_for(P_dev1_a, timeout=1)) == 0

    def d_cb_pending_first(c):
        P_dev2_a = "/dev2/a-" + uuid.uuid4().hex
        uid, key, tok = setup(c)
        rtp(c, tok, num="46733123454", cb=cbu(P_dev2_a))
        hits = rx.wait_for(P_dev2_a, 2, timeout=5)
        return [h[2]["status"] for h in hits] == ["PENDING", "SUCCESSFUL"]

    def d_cb_path(c):
        P_dev3_a = "/dev3/a-" + uuid.uuid4().hex
        uid, key, tok = setup(c)
        before = len(rx.wait_for("/", timeout=0))
        rtp(c, tok, cb=cbu(P_dev3_a + "?x=1"))
        return len(rx.wait_for("/", before + 1)) >= before + 1 and not rx.wait_for(P_dev3_a + "?x=1", timeout=0.5)

    def d_delayed_no_cb(c):
        P_dev4_a = "/dev4/a-" + uuid.uuid4().hex
        uid, key, tok = setup(c)
        ref, _, _ = rtp(c, tok, num="46733123454", cb=cbu(P_dev4_a))
        time.sleep(2.5)
        return status(c, tok, ref)["status"] == "SUCCESSFUL" and not rx.wait_for(P_dev4_a, timeout=0.5)

    def d_reason_missing(c):
        uid, key, tok = setup(c)
        js = status(c, tok, rtp(c, tok, num="46733123450")[0])
        return js["status"] == "FAILED" and "reason" not in js

    def d_refund_unknown(c):
        uid, key, tok = setup(c, "disbursement")
        ref = str(uuid.uuid4())
        c.call("POST", "/disbursement/v1_0/refund", bh("disbursement", tok, X_Reference_Id=ref),
               {"amount": "1", "currency": "EUR", "referenceIdToRefund": str(uuid.uuid4())})
        return status(c, tok, ref, "refund", "disbursement")["status"] == "SUCCESSFUL"

    def d_deposit_numbers(c):
        uid, key, tok = setup(c, "disbursement")
        ref = str(uuid.uuid4())
        c.call("POST", "/disbursement/v1_0/deposit", bh("disbursement", tok, X_Reference_Id=ref),
               {"amount": "1", "currency": "EUR", "payee": {"partyIdType": "MSISDN", "partyId": "46733123450"}})
        return status(c, tok, ref, "deposit", "disbursement")["status"] == "SUCCESSFUL"

    def d_float(c):
        uid, key, tok = setup(c)
        rtp(c, tok, body=rtp_body("46733123459", "0.1"))
        rtp(c, tok, body=rtp_body("46733123459", "0.2"))
        return c.call("GET", "/collection/v1_0/account/balance/EUR", bh("collection", tok))[1]["availableBalance"] == "0.30000000000000004"

    def d_party_case(c):
        uid, key, tok = setup(c)
        b = rtp_body("46733123459")
        b["payer"]["partyIdType"] = "msisdn"
        return rtp(c, tok, body=b)[1] == 202

    def d_missing_env(c):
        uid, key, tok = setup(c)
        h = bh("collection", tok, X_Reference_Id=str(uuid.uuid4()))
        del h["X-Target-Environment"]
        return c.call("POST", "/collection/v1_0/requesttopay", h, rtp_body("46733123459"))[0] == 202

    def d_dup_typo(c):
        uid, key, tok = setup(c)
        ref, _, _ = rtp(c, tok)
        _, st, js = rtp(c, tok, ref=ref)
        return st == 409 and js["code"] == "RESOURCE_ALREADY_EXISTS"

    def d_dn_owner(c):
        uid, key, tok = setup(c)
        uid2, key2, tok2 = setup(c)
        ref, _, _ = rtp(c, tok)
        return c.call("POST", "/collection/v1_0/requesttopay/%s/deliverynotification" % ref, bh("collection", tok2),
                      {"notificationMessage": "hi"})[0] == 200

    def d_valid_in(c):
        uid, key, tok = setup(c)
        js = c.call("POST", "/collection/v1_0/bc-authorize", bh("collection", tok),
                    "login_hint=ID:46733123459/MSISDN&scope=profile&access_type=offline&consent_valid_in=120", form=True)[1]
        basic = base64.b64encode(("%s:%s" % (uid, key)).encode()).decode()
        js = c.call("POST", "/disbursement/oauth2/token/", {"Ocp-Apim-Subscription-Key": "dk", "Authorization": "Basic " + basic,
                    "X-Target-Environment": "sandbox"}, "grant_type=urn:openid:params:grant-type:ciba&auth_req_id=" + js["auth_req_id"],
                    form=True)[1]
        return js["refresh_token_expired_in"] != 120

    def d_apiuser_dup(c):
        uid, key = provision(c, "collection")
        return c.call("POST", "/v1_0/apiuser", {"Ocp-Apim-Subscription-Key": "ck", "X-Reference-Id": uid},
                      {"providerCallbackHost": "h"})[0] == 201

    devs = {"apiuser-duplicate-201": d_apiuser_dup, "apiuser-non-uuid-accepted": d_apiuser_non_uuid,
            "token-expiry-ignored": d_token_expiry, "token-failure-500-in-spec": d_token_500,
            "token-key-not-checked": d_token_key, "rtp-duplicate-overwrites": d_rtp_overwrite,
            "refused-id-reserved": d_refused_reserved, "duplicate-code-typo": d_dup_typo,
            "callback-missing-on-failed": d_cb_failed, "callback-pending-first": d_cb_pending_first,
            "callback-drops-path": d_cb_path, "delayed-outcome-no-callback": d_delayed_no_cb,
            "failed-reason-missing": d_reason_missing, "refund-unknown-reference-successful": d_refund_unknown,
            "deposit-ignores-test-numbers": d_deposit_numbers, "balance-float-arithmetic": d_float,
            "party-id-type-case-insensitive": d_party_case, "missing-target-env-accepted": d_missing_env,
            "dn-not-owner-accepted": d_dn_owner, "consent-valid-in-ignored": d_valid_in}
    # second-round deviations: their scenarios live in deviation_checks.py
    import deviation_checks as DC
    for _name, _fn in DC.CHECKS.items():
        devs[_name] = (lambda f: (lambda c: f(DC.Ctx(DC.Client(c.base), KEYS, rx))))(_fn)

    # controls
    def c_retry(c):
        P_ctl1_a = "/ctl1/a-" + uuid.uuid4().hex
        uid, key, tok = setup(c)
        rtp(c, tok, cb="http://127.0.0.1:%d%s" % (flaky.port, P_ctl1_a))
        return len(flaky.wait_for(P_ctl1_a, 2, timeout=4)) == 2

    def c_put(c):
        P_ctl2_a = "/ctl2/a-" + uuid.uuid4().hex
        uid, key, tok = setup(c)
        rtp(c, tok, cb=cbu(P_ctl2_a))
        h = rx.wait_for(P_ctl2_a)
        return len(h) == 1 and h[0][0] == "PUT"

    def c_2dec(c):
        uid, key, tok = setup(c)
        return rtp(c, tok, body=rtp_body("46733123459", "1.005"))[1] == 400

    def c_partial(c):
        uid, key, tok = setup(c)
        ref, _, _ = rtp(c, tok)
        duid, dkey, dtok = setup(c, "disbursement")
        rr = str(uuid.uuid4())
        c.call("POST", "/disbursement/v1_0/refund", bh("disbursement", dtok, X_Reference_Id=rr),
               {"amount": "1", "currency": "EUR", "referenceIdToRefund": ref})
        rr2 = str(uuid.uuid4())
        c.call("POST", "/disbursement/v1_0/refund", bh("disbursement", dtok, X_Reference_Id=rr2),
               {"amount": "12.50", "currency": "EUR", "referenceIdToRefund": ref})
        return (status(c, dtok, rr, "refund", "disbursement")["status"] == "FAILED"
                and status(c, dtok, rr2, "refund", "disbursement")["status"] == "SUCCESSFUL")

    def c_shared(c):
        uid, key, tok = setup(c)
        uid2, key2, tok2 = setup(c)
        rtp(c, tok)
        return c.call("GET", "/collection/v1_0/account/balance/EUR", bh("collection", tok2))[1]["availableBalance"] == "12.5"

    def c_interval(c):
        uid, key, tok = setup(c)
        js = c.call("POST", "/collection/v1_0/bc-authorize", bh("collection", tok),
                    "login_hint=ID:46733123459/MSISDN&scope=profile&access_type=offline", form=True)[1]
        return js["interval"] == 10

    def c_grace(c):
        uid, key, tok = setup(c)
        time.sleep(6.3)
        return c.call("GET", "/collection/v1_0/account/balance/EUR", bh("collection", tok))[0] == 200

    def c_window(c):
        uid, key, tok = setup(c)
        ref, _, _ = rtp(c, tok)
        time.sleep(10.3)
        tok = token(c, "collection", uid, key)[1]["access_token"]
        return c.call("POST", "/collection/v1_0/requesttopay/%s/deliverynotification" % ref, bh("collection", tok),
                      {"notificationMessage": "hi"})[0] == 410

    def c_extra(c):
        uid, key, tok = setup(c)
        return "referenceId" in status(c, tok, rtp(c, tok)[0])

    def c_french(c):
        uid, key, tok = setup(c)
        ref, _, _ = rtp(c, tok)
        return "dupliqué" in rtp(c, tok, ref=ref)[2]["message"]

    def c_accepted(c):
        uid, key, tok = setup(c)
        ref, st, js = rtp(c, tok)
        return st == 202 and js == {"referenceId": ref, "status": "PENDING"}

    def c_charset(c):
        uid, key = provision(c, "collection")
        return token(c, "collection", uid, key)[2].get("Content-Type") == "application/json; charset=utf-8"

    # controls added in the seventh round
    def dn_call(c, tok, ref):
        return c.call("POST", "/collection/v1_0/requesttopay/%s/deliverynotification" % ref, bh("collection", tok),
                      {"notificationMessage": "hi"})[0]

    def c_cooldown_3s(c):
        uid, key, tok = setup(c)
        ref, _, _ = rtp(c, tok)
        first, second = dn_call(c, tok, ref), dn_call(c, tok, ref)
        time.sleep(3.3)
        third, fourth = dn_call(c, tok, ref), dn_call(c, tok, ref)
        return (first, second, third, fourth) == (200, 429, 200, 429)

    def consent_userinfo(c, uid, key, tok, scope):
        js = c.call("POST", "/collection/v1_0/bc-authorize", bh("collection", tok),
                    "login_hint=ID:46733123459/MSISDN&scope=%s&access_type=offline" % scope, form=True)[1]
        basic = base64.b64encode(("%s:%s" % (uid, key)).encode()).decode()
        js = c.call("POST", "/disbursement/oauth2/token/", {"Ocp-Apim-Subscription-Key": "dk", "Authorization": "Basic " + basic,
                    "X-Target-Environment": "sandbox"}, "grant_type=urn:openid:params:grant-type:ciba&auth_req_id=" + js["auth_req_id"],
                    form=True)[1]
        st, js, _ = c.call("GET", "/collection/oauth2/v1_0/userinfo", bh("collection", js["access_token"]))
        return js if st == 200 else {}

    def c_claims_by_scope(c):
        uid, key, tok = setup(c)
        only_openid = consent_userinfo(c, uid, key, tok, "openid")
        profile = consent_userinfo(c, uid, key, tok, "profile")
        everything = consent_userinfo(c, uid, key, tok, "all_info")
        return (set(only_openid) == {"sub"} and {"sub", "name", "given_name", "family_name", "locale"} <= set(profile)
                and "email" not in profile and "credit_score" not in profile and len(everything) == 24)

    def c_basic_rtp(c):
        uid, key, tok = setup(c)
        basic = base64.b64encode(("%s:%s" % (uid, key)).encode()).decode()
        wrong = base64.b64encode(("%s:%s" % (uid, "0" * 32)).encode()).decode()
        ref = str(uuid.uuid4())
        h = {"Ocp-Apim-Subscription-Key": "ck", "Authorization": "Basic " + basic, "X-Target-Environment": "sandbox",
             "X-Reference-Id": ref}
        st = c.call("POST", "/collection/v1_0/requesttopay", h, rtp_body("46733123459"))[0]
        h2 = dict(h, **{"Authorization": "Basic " + wrong, "X-Reference-Id": str(uuid.uuid4())})
        st2, js2, _ = c.call("POST", "/collection/v1_0/requesttopay", h2, rtp_body("46733123459"))
        return st == 202 and status(c, tok, ref)["status"] == "SUCCESSFUL" and st2 == 401 and js2 == {"error": "login_failed"}

    def refund_call(c, dtok, ref, target, amount="1"):
        return c.call("POST", "/disbursement/v1_0/refund", bh("disbursement", dtok, X_Reference_Id=ref),
                      {"amount": amount, "currency": "EUR", "referenceIdToRefund": target})[0]

    def c_refund_target(c):
        duid, dkey, dtok = setup(c, "disbursement")
        rr = str(uuid.uuid4())
        st1 = refund_call(c, dtok, rr, str(uuid.uuid4()))
        st_read = c.call("GET", "/disbursement/v1_0/refund/" + rr, bh("disbursement", dtok))[0]
        uid, key, tok = setup(c)
        pref, _, _ = rtp(c, tok)
        st2 = refund_call(c, dtok, rr, pref)
        return st1 == 400 and st_read == 404 and st2 == 202 and \
            status(c, dtok, rr, "refund", "disbursement")["status"] == "SUCCESSFUL"

    def c_usd(c):
        uid, key, tok = setup(c)
        ref, st, _ = rtp(c, tok, body=dict(rtp_body("46733123459", "10"), currency="USD"))
        bal = lambda product, t, cur: c.call("GET", "/%s/v1_0/account/balance/%s" % (product, cur), bh(product, t))[1]
        if st != 202:
            return False
        paid = status(c, tok, ref)["status"] == "SUCCESSFUL"
        col = bal("collection", tok, "USD") == {"availableBalance": "10", "currency": "USD"} and \
            bal("collection", tok, "EUR")["availableBalance"] == "0"
        duid, dkey, dtok = setup(c, "disbursement")
        dref = str(uuid.uuid4())
        c.call("POST", "/disbursement/v1_0/deposit", bh("disbursement", dtok, X_Reference_Id=dref),
               {"amount": "5", "currency": "USD", "payee": {"partyIdType": "MSISDN", "partyId": "46733123459"}})
        dep = status(c, dtok, dref, "deposit", "disbursement")["status"] == "SUCCESSFUL" and \
            bal("disbursement", dtok, "USD")["availableBalance"] == "999995" and \
            bal("disbursement", dtok, "EUR")["availableBalance"] == "1000000"
        other = rtp(c, tok, body=dict(rtp_body("46733123459", "10"), currency="GBP"))[1] == 500
        return paid and col and dep and other

    def c_refund_window(c):
        uid, key, tok = setup(c)
        pref, _, _ = rtp(c, tok)
        duid, dkey, dtok = setup(c, "disbursement")
        r1 = str(uuid.uuid4())
        refund_call(c, dtok, r1, pref)
        soon = status(c, dtok, r1, "refund", "disbursement")["status"] == "SUCCESSFUL"
        time.sleep(10.3)
        dtok = token(c, "disbursement", duid, dkey)[1]["access_token"]
        r2 = str(uuid.uuid4())
        st = refund_call(c, dtok, r2, pref)
        js = status(c, dtok, r2, "refund", "disbursement")
        reason = js.get("reason")
        reason = reason.get("code") if isinstance(reason, dict) else reason
        return soon and st == 202 and js["status"] == "FAILED" and reason == "NOT_ALLOWED"

    new_ctls = {"notification-cooldown-3s": c_cooldown_3s, "userinfo-claims-by-scope": c_claims_by_scope,
                "basic-auth-on-request-to-pay": c_basic_rtp, "refund-target-checked-at-creation": c_refund_target,
                "second-currency-usd": c_usd, "refund-window-10s": c_refund_window}

    ctls = {"callback-retry-until-2xx": c_retry, "callback-put": c_put, "amount-max-2-decimals": c_2dec,
            "no-partial-refunds": c_partial, "shared-balance": c_shared, "consent-interval-long": c_interval,
            "token-grace": c_grace, "delivery-window-short": c_window, "status-extra-fields": c_extra,
            "errors-french": c_french, "accepted-body": c_accepted, "content-type-charset": c_charset}
    ctls.update(new_ctls)

    flaky = FlakyReceiver()
    jobs = []
    for kind, table, flag in (("deviation", devs, "--list-deviations"), ("control", ctls, "--list-controls")):
        out = subprocess.run([sys.executable, os.path.join(HERE, "server.py"), flag], capture_output=True, text=True)
        for line in out.stdout.strip().splitlines():
            name, prof = line.split("\t")[:2]
            check(name in table, "self-test covers %s %s" % (kind, name))
            for profile in prof[len("profiles="):].split(","):
                if name in table and not (name == "shared-balance" and profile == "mtn-sandbox"):
                    jobs.append(threading.Thread(target=with_server, args=(profile, kind, name, table[name])))
                if kind == "control" and name in new_ctls:
                    jobs.append(threading.Thread(target=with_server, args=(profile, kind, name, table[name], True)))
    for j in jobs:
        j.start()
    for j in jobs:
        j.join()


def main():
    rx = Receiver()
    run_profile("spec", rx)
    run_profile("mtn-sandbox", rx)
    run_switches()
    run_effects(rx)
    print("passed %d checks, failed %d" % (PASSES[0], len(FAILS)))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
