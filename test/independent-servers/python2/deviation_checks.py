#!/usr/bin/env python3
"""Shows that each deviation of server.py added after the first round changes what a black-box client sees.

For every deviation in CHECKS and every profile it lists, this script starts
    server.py --port 0 --profile P --keys ... --deviation NAME
and a plain server of the same profile (no switch; both with the flags of CHECK_ARGS where a
scenario needs other timings), runs the same short scenario against
both, and requires that the scenario sees the departure on the deviation server and does
not see it on the plain server.  Servers bind to 127.0.0.1 only; callbacks go to a
receiver on 127.0.0.1.  Exit code 0 = every deviation shows, and no plain server shows it.

Usage: python3 deviation_checks.py [NAME ...]
"""
import base64
import http.client
import json
import os
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))
KEYS = {"collection": "K1", "disbursement": "K2", "remittance": "K3"}
CIBA = "urn:openid:params:grant-type:ciba"


# ------------------------------------------------------------------ plumbing
class Receiver:
    """Callback receiver on 127.0.0.1; answers 200 and records (method, path, json body)."""

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
                try:
                    js = json.loads(body) if body else None
                except ValueError:
                    js = body
                with rec.lock:
                    rec.got.append((self.command, self.path, js))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()
            do_PUT = do_POST = _any

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def wait_for(self, path, n=1, timeout=5):
        end = time.time() + timeout
        while True:
            with self.lock:
                hits = [g for g in self.got if g[1] == path]
            if len(hits) >= n or time.time() >= end:
                return hits
            time.sleep(0.05)


class Client:
    def __init__(self, base):
        self.base = base

    def call(self, method, path, headers=None, body=None, form=False):
        data = None
        h = dict(headers or {})
        if body is not None:
            if isinstance(body, bytes):
                data = body
                h.setdefault("Content-Type", "application/json")
            elif form:
                data = body.encode()
                h.setdefault("Content-Type", "application/x-www-form-urlencoded")
            else:
                data = json.dumps(body).encode()
                h.setdefault("Content-Type", "application/json")
        req = urllib.request.Request(self.base + path, data=data, method=method, headers=h)
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                raw, st, hdrs = r.read(), r.status, r.headers
        except urllib.error.HTTPError as e:
            raw, st, hdrs = e.read(), e.code, e.headers
        try:
            js = json.loads(raw) if raw else None
        except ValueError:
            js = raw
        return st, js, hdrs

    def raw_post(self, path, headers, data):
        """POST with exactly the given headers (urllib would add a Content-Type)."""
        u = urllib.parse.urlsplit(self.base)
        conn = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
        try:
            conn.putrequest("POST", path, skip_accept_encoding=True)
            for k, v in headers.items():
                conn.putheader(k, v)
            conn.putheader("Content-Length", str(len(data)))
            conn.endheaders(data)
            resp = conn.getresponse()
            return resp.status, resp.read()
        finally:
            conn.close()


def start_server(profile, extra=()):
    args = [sys.executable, os.path.join(HERE, "server.py"), "--port", "0", "--profile", profile,
            "--keys", ",".join("%s=%s" % kv for kv in KEYS.items()),
            "--token-lifetime", "120", "--delayed-approval-seconds", "1", "--pending-timeout-seconds", "2"] + list(extra)
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = p.stdout.readline().strip()
    if not line.startswith("listening on http://127.0.0.1:"):
        p.kill()
        raise RuntimeError("server did not start: %r" % line)
    return p, Client(line[len("listening on "):])


def stop_server(p):
    p.terminate()
    try:
        p.wait(3)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


class Ctx:
    """Helpers for one scenario against one server."""

    def __init__(self, c, keys, rx):
        self.c, self.keys, self.rx = c, keys, rx

    def cb(self, tag):
        path = "/dc/%s-%s" % (tag, uuid.uuid4().hex)
        return path, "http://127.0.0.1:%d%s" % (self.rx.port, path)

    def provision(self, product):
        uid = str(uuid.uuid4())
        sk = {"Ocp-Apim-Subscription-Key": self.keys[product]}
        st, _, _ = self.c.call("POST", "/v1_0/apiuser", dict(sk, **{"X-Reference-Id": uid}),
                               {"providerCallbackHost": "127.0.0.1"})
        assert st == 201, ("create api user", st)
        st, js, _ = self.c.call("POST", "/v1_0/apiuser/%s/apikey" % uid, sk)
        assert st in (200, 201) and js and "apiKey" in js, ("create api key", st, js)
        return uid, js["apiKey"]

    def basic(self, uid, key):
        return "Basic " + base64.b64encode(("%s:%s" % (uid, key)).encode()).decode()

    def token(self, product, uid, key):
        return self.c.call("POST", "/%s/token/" % product,
                           {"Ocp-Apim-Subscription-Key": self.keys[product], "Authorization": self.basic(uid, key)})

    def setup(self, product="collection"):
        uid, key = self.provision(product)
        st, js, _ = self.token(product, uid, key)
        assert st == 200, ("token", st, js)
        return uid, key, js["access_token"]

    def bh(self, product, tok, ref=None, cb=None, **extra):
        h = {"Ocp-Apim-Subscription-Key": self.keys[product], "Authorization": "Bearer " + tok,
             "X-Target-Environment": "sandbox"}
        if ref:
            h["X-Reference-Id"] = ref
        if cb:
            h["X-Callback-Url"] = cb
        h.update(extra)
        return h

    def rtp(self, tok, msisdn="46733123459", amount="10", cb=None, **fields):
        ref = str(uuid.uuid4())
        body = {"amount": amount, "currency": "EUR", "externalId": "e1",
                "payer": {"partyIdType": "MSISDN", "partyId": msisdn}, "payerMessage": "pay", "payeeNote": "note"}
        body.update(fields)
        st, js, _ = self.c.call("POST", "/collection/v1_0/requesttopay", self.bh("collection", tok, ref, cb), body)
        return ref, st, js

    def deposit(self, tok, msisdn="46733123459", amount="10", cb=None, **fields):
        ref = str(uuid.uuid4())
        body = {"amount": amount, "currency": "EUR", "externalId": "d1",
                "payee": {"partyIdType": "MSISDN", "partyId": msisdn}, "payerMessage": "dep", "payeeNote": "note"}
        body.update(fields)
        st, js, _ = self.c.call("POST", "/disbursement/v1_0/deposit", self.bh("disbursement", tok, ref, cb), body)
        return ref, st, js

    def refund(self, tok, ref_to_refund, amount="4", cb=None):
        ref = str(uuid.uuid4())
        body = {"amount": amount, "currency": "EUR", "externalId": "r1", "payerMessage": "ref", "payeeNote": "note",
                "referenceIdToRefund": ref_to_refund}
        st, js, _ = self.c.call("POST", "/disbursement/v1_0/refund", self.bh("disbursement", tok, ref, cb), body)
        return ref, st, js

    def status(self, tok, ref, kind="requesttopay"):
        product = "collection" if kind == "requesttopay" else "disbursement"
        return self.c.call("GET", "/%s/v1_0/%s/%s" % (product, kind, ref), self.bh(product, tok))

    def balance(self, product, tok):
        path = "/%s/v1_0/account/balance" % product + ("/EUR" if product == "collection" else "")
        st, js, _ = self.c.call("GET", path, self.bh(product, tok))
        assert st == 200, ("balance", st, js)
        return js["availableBalance"]

    def dn(self, tok, ref, msg="Your goods are on the way"):
        return self.c.call("POST", "/collection/v1_0/requesttopay/%s/deliverynotification" % ref,
                           self.bh("collection", tok), {"notificationMessage": msg})

    def bc_authorize(self, tok, scope="profile", cb=None, extra=""):
        form = "login_hint=ID:46733123459/MSISDN&scope=%s&access_type=offline%s" % (urllib.parse.quote(scope), extra)
        return self.c.call("POST", "/collection/v1_0/bc-authorize", self.bh("collection", tok, cb=cb), form, form=True)

    def consent_token(self, uid, key, auth_req_id):
        return self.c.call("POST", "/disbursement/oauth2/token/",
                           {"Ocp-Apim-Subscription-Key": self.keys["disbursement"], "Authorization": self.basic(uid, key),
                            "X-Target-Environment": "sandbox"},
                           "grant_type=%s&auth_req_id=%s" % (CIBA, auth_req_id), form=True)


# ------------------------------------------------------------------ scenarios
# Each returns True when the departure is seen.

def chk_apiuser_malformed_json_500(x):
    st, _, _ = x.c.call("POST", "/v1_0/apiuser", {"Ocp-Apim-Subscription-Key": x.keys["collection"],
                                                  "X-Reference-Id": str(uuid.uuid4())}, b'{"providerCallbackHost":')
    return st == 500


def chk_apikey_created_200(x):
    uid = str(uuid.uuid4())
    sk = {"Ocp-Apim-Subscription-Key": x.keys["collection"]}
    x.c.call("POST", "/v1_0/apiuser", dict(sk, **{"X-Reference-Id": uid}), {"providerCallbackHost": "127.0.0.1"})
    st, js, _ = x.c.call("POST", "/v1_0/apiuser/%s/apikey" % uid, sk)
    return st == 200 and "apiKey" in js


def chk_access_token_not_jwt(x):
    uid, key, tok = x.setup()
    usable = x.c.call("GET", "/collection/v1_0/account/balance/EUR", x.bh("collection", tok))[0] == 200
    return usable and len(tok.split(".")) != 3


def chk_token_failure_without_error(x):
    uid, key = x.provision("collection")
    st, js, _ = x.token("collection", uid, "0" * 32)
    return st in (401, 500) and isinstance(js, dict) and "error" not in js


def chk_consent_token_key_not_checked(x):
    uid, key, tok = x.setup()
    arid = x.bc_authorize(tok)[1]["auth_req_id"]
    duid, dkey = x.provision("disbursement")
    st, js, _ = x.consent_token(duid, "f" * 32, arid)
    return st == 200 and "access_token" in js


def chk_consent_scope_first_only(x):
    uid, key, tok = x.setup()
    arid = x.bc_authorize(tok, scope="profile openid")[1]["auth_req_id"]
    duid, dkey = x.provision("disbursement")
    st, js, _ = x.consent_token(duid, dkey, arid)
    return st == 200 and set(js["scope"].split()) != {"profile", "openid"}


def chk_consent_token_without_refresh_expiry(x):
    uid, key, tok = x.setup()
    arid = x.bc_authorize(tok)[1]["auth_req_id"]
    duid, dkey = x.provision("disbursement")
    st, js, _ = x.consent_token(duid, dkey, arid)
    return st == 200 and "refresh_token_expired_in" not in js


def chk_consent_request_numbers_as_strings(x):
    uid, key, tok = x.setup()
    st, js, _ = x.bc_authorize(tok)
    return st == 200 and (isinstance(js["interval"], str) or isinstance(js["expires_in"], str))


def chk_consent_callback_previous_id(x):
    uid, key, tok = x.setup()
    p1, u1 = x.cb("ciba1")
    p2, u2 = x.cb("ciba2")
    a1 = x.bc_authorize(tok, cb=u1)[1]["auth_req_id"]
    a2 = x.bc_authorize(tok, cb=u2)[1]["auth_req_id"]
    h2 = x.rx.wait_for(p2, timeout=3)
    return len(h2) >= 1 and h2[0][2].get("auth_req_id") != a2


def chk_refund_callback_to_payment_url(x):
    uid, key, tok = x.setup()
    pp, up = x.cb("pay")
    pr, ur = x.cb("refund")
    pref, st, _ = x.rtp(tok, cb=up)
    assert st == 202
    x.rx.wait_for(pp, 1, timeout=3)
    duid, dkey, dtok = x.setup("disbursement")
    rref, st, _ = x.refund(dtok, pref, cb=ur)
    assert st == 202
    own = x.rx.wait_for(pr, 1, timeout=2)
    on_payment = x.rx.wait_for(pp, 2, timeout=0.5)
    return len(own) == 0 and len(on_payment) >= 2


def chk_callback_amount_not_normalised(x):
    uid, key, tok = x.setup()
    p, u = x.cb("amt")
    ref, st, _ = x.rtp(tok, amount="12.50", cb=u)
    hits = x.rx.wait_for(p, timeout=3)
    got = x.status(tok, ref)[1]
    return len(hits) == 1 and hits[0][2]["amount"] != got["amount"]


def chk_callback_url_https_refused(x):
    uid, key, tok = x.setup()
    ref, st, _ = x.rtp(tok, cb="https://127.0.0.1:9/momo/callback")
    return st == 400


def chk_rtp_content_type_required(x):
    uid, key, tok = x.setup()
    body = json.dumps({"amount": "10", "currency": "EUR", "externalId": "e1",
                       "payer": {"partyIdType": "MSISDN", "partyId": "46733123459"}}).encode()
    st, _ = x.c.raw_post("/collection/v1_0/requesttopay", x.bh("collection", tok, str(uuid.uuid4())), body)
    return st == 400


def chk_transaction_id_unstable(x):
    uid, key, tok = x.setup()
    ref, st, _ = x.rtp(tok)
    a = x.status(tok, ref)[1]
    b = x.status(tok, ref)[1]
    return a["status"] == "SUCCESSFUL" and a.get("financialTransactionId") != b.get("financialTransactionId")


def chk_dn_repeat_409(x):
    uid, key, tok = x.setup()
    ref, st, _ = x.rtp(tok)
    first = x.dn(tok, ref)[0]
    second = x.dn(tok, ref)[0]
    return first == 200 and second == 409


def chk_dn_unknown_id_409(x):
    uid, key, tok = x.setup()
    return x.dn(tok, str(uuid.uuid4()))[0] == 409


def chk_failed_deposit_status_404(x):
    uid, key, tok = x.setup("disbursement")
    ref, st, _ = x.deposit(tok, msisdn="46733123450")
    assert st == 202
    return x.status(tok, ref, "deposit")[0] == 404


def chk_deposit_funds_check_off_by_one(x):
    uid, key, tok = x.setup("disbursement")
    bal = x.balance("disbursement", tok)
    ref, st, _ = x.deposit(tok, amount=bal)
    js = x.status(tok, ref, "deposit")[1]
    return js["status"] == "FAILED"


def chk_overdraft_zeroes_balance(x):
    uid, key, tok = x.setup("disbursement")
    before = x.balance("disbursement", tok)
    ref, st, _ = x.deposit(tok, amount=str(int(before) + 1))
    js = x.status(tok, ref, "deposit")[1]
    return js["status"] == "FAILED" and x.balance("disbursement", tok) != before


def chk_balance_per_token(x):
    uid, key, tok = x.setup()
    ref, st, _ = x.rtp(tok, amount="10")
    assert x.status(tok, ref)[1]["status"] == "SUCCESSFUL"
    tok2 = x.token("collection", uid, key)[1]["access_token"]
    return x.balance("collection", tok2) != "10"


def chk_deposit_amount_minor_units(x):
    uid, key, tok = x.setup("disbursement")
    ref, st, _ = x.deposit(tok, amount="12.50")
    return x.status(tok, ref, "deposit")[1]["amount"] not in ("12.5", "12.50")


def chk_partial_refund_reduces_payment_amount(x):
    uid, key, tok = x.setup()
    pref, st, _ = x.rtp(tok, amount="10")
    before = x.status(tok, pref)[1]["amount"]
    duid, dkey, dtok = x.setup("disbursement")
    rref, st, _ = x.refund(dtok, pref, amount="4")
    assert x.status(dtok, rref, "refund")[1]["status"] == "SUCCESSFUL"
    return x.status(tok, pref)[1]["amount"] != before


def chk_disbursement_holder_party_code_refused(x):
    uid, key, tok = x.setup("disbursement")
    st, _, _ = x.c.call("GET", "/disbursement/v1_0/accountholder/party_code/%s/active" % uuid.uuid4(),
                        x.bh("disbursement", tok))
    return st == 400


def chk_basic_info_locale_lowercase(x):
    uid, key, tok = x.setup()
    st, js, _ = x.c.call("GET", "/collection/v1_0/accountholder/msisdn/46733123459/basicuserinfo", x.bh("collection", tok))
    return st == 200 and js["locale"] == js["locale"].lower()


def chk_text_limit_off_by_one(x):
    uid, key, tok = x.setup()
    ref, st, _ = x.rtp(tok, payerMessage="x" * 160)
    return st == 400


def chk_rtp_status_404_without_body(x):
    uid, key, tok = x.setup()
    st, js, _ = x.status(tok, str(uuid.uuid4()))
    return st == 404 and js is None


def chk_deposit_text_length_not_checked(x):
    uid, key, tok = x.setup("disbursement")
    ref, st, _ = x.deposit(tok, payeeNote="n" * 161)
    return st == 202


# ---- seventh round ------------------------------------------------------------

def _wait_status(x, tok, ref, kind="requesttopay", timeout=9, uid=None, key=None):
    """Polls a status until it leaves PENDING; renews the token if it runs out."""
    end = time.time() + timeout
    product = "collection" if kind == "requesttopay" else "disbursement"
    while True:
        st, js, _ = x.status(tok, ref, kind)
        if st == 401 and uid:
            tok = x.token(product, uid, key)[1]["access_token"]
            continue
        if (st == 200 and js.get("status") != "PENDING") or time.time() >= end:
            return js
        time.sleep(0.25)


def _consent_token(x, tok, scope="profile"):
    arid = x.bc_authorize(tok, scope=scope)[1]["auth_req_id"]
    duid, dkey = x.provision("disbursement")
    return x.consent_token(duid, dkey, arid)


def _userinfo(x, ctok):
    return x.c.call("GET", "/collection/oauth2/v1_0/userinfo", x.bh("collection", ctok))


def chk_concurrent_duplicate_500(x):
    uid, key, tok = x.setup()
    ref = str(uuid.uuid4())
    body = {"amount": "10", "currency": "EUR", "externalId": "e1",
            "payer": {"partyIdType": "MSISDN", "partyId": "46733123459"}}

    def send(_):
        return x.c.call("POST", "/collection/v1_0/requesttopay", x.bh("collection", tok, ref), body)[0]
    with ThreadPoolExecutor(max_workers=2) as ex:
        together = sorted(ex.map(send, range(2)))
    later = send(None)
    return together == [202, 500] and later == 409


def chk_delayed_payment_notification_expired(x):
    uid, key, tok = x.setup()
    ref, st, _ = x.rtp(tok, msisdn="46733123454")
    assert st == 202
    assert _wait_status(x, tok, ref, uid=uid, key=key)["status"] == "SUCCESSFUL"
    tok = x.token("collection", uid, key)[1]["access_token"]
    return x.dn(tok, ref)[0] == 410


def chk_callback_needs_live_token(x):
    uid, key = x.provision("collection")
    st, js, _ = x.token("collection", uid, key)
    tok, life = js["access_token"], js["expires_in"]
    time.sleep(max(0.0, life - 1.0))          # about a second of the token's life is left
    p, u = x.cb("live")
    ref, st, _ = x.rtp(tok, msisdn="46733123454", cb=u)   # becomes final after the token has expired
    assert st == 202
    hits = x.rx.wait_for(p, timeout=6)
    tok = x.token("collection", uid, key)[1]["access_token"]
    final = _wait_status(x, tok, ref, uid=uid, key=key)["status"]
    return final == "SUCCESSFUL" and len(hits) == 0


def chk_consent_token_short_lived(x):
    uid, key = x.provision("collection")
    js = x.token("collection", uid, key)[1]
    tok, life = js["access_token"], js["expires_in"]
    st, cj, _ = _consent_token(x, tok)
    assert st == 200 and cj["expires_in"] == 3600
    first = _userinfo(x, cj["access_token"])[0]
    time.sleep(life + 0.5)
    second = _userinfo(x, cj["access_token"])[0]
    return first == 200 and second == 401


def chk_refund_cap_compared_as_text(x):
    uid, key, tok = x.setup()
    pref, st, _ = x.rtp(tok, amount="10")
    assert x.status(tok, pref)[1]["status"] == "SUCCESSFUL"
    duid, dkey, dtok = x.setup("disbursement")
    rref, st, _ = x.refund(dtok, pref, amount="4")
    assert st == 202
    return x.status(dtok, rref, "refund")[1]["status"] == "FAILED"


def chk_notification_cooldown_per_token(x):
    uid, key, tok = x.setup()
    ref, st, _ = x.rtp(tok)
    first, second = x.dn(tok, ref)[0], x.dn(tok, ref)[0]
    tok2 = x.token("collection", uid, key)[1]["access_token"]
    third = x.dn(tok2, ref)[0]
    return first == 200 and second == 429 and third == 200


def chk_msisdn_national_format_accepted(x):
    uid, key, tok = x.setup()
    ref, st, _ = x.rtp(tok, msisdn="0733123456")
    return st == 202


def chk_callback_header_name_case_sensitive(x):
    uid, key, tok = x.setup()
    body = json.dumps({"amount": "10", "currency": "EUR", "externalId": "e1",
                       "payer": {"partyIdType": "MSISDN", "partyId": "46733123459"}}).encode()
    p1, u1 = x.cb("exact")
    p2, u2 = x.cb("lower")
    h1 = dict(x.bh("collection", tok, str(uuid.uuid4())), **{"Content-Type": "application/json", "X-Callback-Url": u1})
    h2 = dict(x.bh("collection", tok, str(uuid.uuid4())), **{"Content-Type": "application/json", "x-callback-url": u2})
    st1, _ = x.c.raw_post("/collection/v1_0/requesttopay", h1, body)
    st2, _ = x.c.raw_post("/collection/v1_0/requesttopay", h2, body)
    assert st1 == 202 and st2 == 202, (st1, st2)
    exact = x.rx.wait_for(p1, timeout=3)
    lower = x.rx.wait_for(p2, timeout=1.5)
    return len(exact) == 1 and len(lower) == 0


def chk_foreign_product_key_403(x):
    uid, key, tok = x.setup()
    h = x.bh("collection", tok)
    h["Ocp-Apim-Subscription-Key"] = x.keys["disbursement"]
    st, _, _ = x.c.call("GET", "/collection/v1_0/account/balance/EUR", h)
    return st == 403


def chk_deposit_payer_field_accepted(x):
    uid, key, tok = x.setup("disbursement")
    ref = str(uuid.uuid4())
    body = {"amount": "5", "currency": "EUR", "externalId": "d1",
            "payer": {"partyIdType": "MSISDN", "partyId": "46733123459"}, "payerMessage": "dep", "payeeNote": "n"}
    st, _, _ = x.c.call("POST", "/disbursement/v1_0/deposit", x.bh("disbursement", tok, ref), body)
    return st == 202


def chk_bc_authorize_answers_202(x):
    uid, key, tok = x.setup()
    st, js, _ = x.bc_authorize(tok)
    return st == 202 and "auth_req_id" in js


def chk_token_expires_in_fractional(x):
    uid, key = x.provision("collection")
    st, js, _ = x.token("collection", uid, key)
    return st == 200 and not isinstance(js["expires_in"], int)


def chk_userinfo_credit_score_number(x):
    uid, key, tok = x.setup()
    st, cj, _ = _consent_token(x, tok)
    st, js, _ = _userinfo(x, cj["access_token"])
    return st == 200 and "credit_score" in js and not isinstance(js["credit_score"], str)


def chk_callback_host_read_from_userinfo(x):
    uid, key, tok = x.setup()           # providerCallbackHost 127.0.0.1
    path = "/dc/userinfo-%s" % uuid.uuid4().hex
    ref, st, _ = x.rtp(tok, cb="http://127.0.0.1@localhost:%d%s" % (x.rx.port, path))
    return st == 202 and len(x.rx.wait_for(path, timeout=3)) == 1


def chk_test_numbers_matched_by_suffix(x):
    uid, key, tok = x.setup()
    ref, st, _ = x.rtp(tok, msisdn="256772123450")
    assert st == 202
    return x.status(tok, ref)[1]["status"] == "FAILED"


def chk_timeout_status_instead_of_failed(x):
    uid, key, tok = x.setup()
    ref, st, _ = x.rtp(tok, msisdn="46733123453")
    assert st == 202
    return _wait_status(x, tok, ref, timeout=10, uid=uid, key=key).get("status") == "TIMEOUT"


def chk_pending_record_has_transaction_id(x):
    uid, key, tok = x.setup()
    ref, st, _ = x.rtp(tok, msisdn="46733123454")
    js = x.status(tok, ref)[1]
    return js["status"] == "PENDING" and "financialTransactionId" in js


def chk_msisdn_plus_stripped(x):
    uid, key, tok = x.setup()
    ref, st, _ = x.rtp(tok, msisdn="+46733123999")
    assert st == 202
    return x.status(tok, ref)[1]["payer"]["partyId"] != "+46733123999"


def chk_apikey_rebinds_product(x):
    uid = str(uuid.uuid4())
    st, _, _ = x.c.call("POST", "/v1_0/apiuser", {"Ocp-Apim-Subscription-Key": x.keys["collection"], "X-Reference-Id": uid},
                        {"providerCallbackHost": "127.0.0.1"})
    assert st == 201
    st, js, _ = x.c.call("POST", "/v1_0/apiuser/%s/apikey" % uid, {"Ocp-Apim-Subscription-Key": x.keys["disbursement"]})
    assert st == 201
    return x.token("collection", uid, js["apiKey"])[0] != 200


def chk_final_records_archived_without_texts(x):
    uid, key, tok = x.setup()
    ref, st, _ = x.rtp(tok)
    first = x.status(tok, ref)[1]
    time.sleep(3.5)
    later = x.status(tok, ref)[1]
    return "payerMessage" in first and "payerMessage" not in later and "externalId" not in later


CHECKS = {
    "apiuser-malformed-json-500": chk_apiuser_malformed_json_500,
    "apikey-created-200": chk_apikey_created_200,
    "access-token-not-jwt": chk_access_token_not_jwt,
    "token-failure-without-error": chk_token_failure_without_error,
    "consent-token-key-not-checked": chk_consent_token_key_not_checked,
    "consent-scope-first-only": chk_consent_scope_first_only,
    "consent-token-without-refresh-expiry": chk_consent_token_without_refresh_expiry,
    "consent-request-numbers-as-strings": chk_consent_request_numbers_as_strings,
    "consent-callback-previous-id": chk_consent_callback_previous_id,
    "refund-callback-to-payment-url": chk_refund_callback_to_payment_url,
    "callback-amount-not-normalised": chk_callback_amount_not_normalised,
    "callback-url-https-refused": chk_callback_url_https_refused,
    "rtp-content-type-required": chk_rtp_content_type_required,
    "transaction-id-unstable": chk_transaction_id_unstable,
    "dn-repeat-409": chk_dn_repeat_409,
    "dn-unknown-id-409": chk_dn_unknown_id_409,
    "failed-deposit-status-404": chk_failed_deposit_status_404,
    "deposit-funds-check-off-by-one": chk_deposit_funds_check_off_by_one,
    "overdraft-zeroes-balance": chk_overdraft_zeroes_balance,
    "balance-per-token": chk_balance_per_token,
    "deposit-amount-minor-units": chk_deposit_amount_minor_units,
    "partial-refund-reduces-payment-amount": chk_partial_refund_reduces_payment_amount,
    "disbursement-holder-party-code-refused": chk_disbursement_holder_party_code_refused,
    "basic-info-locale-lowercase": chk_basic_info_locale_lowercase,
    "text-limit-off-by-one": chk_text_limit_off_by_one,
    "rtp-status-404-without-body": chk_rtp_status_404_without_body,
    "deposit-text-length-not-checked": chk_deposit_text_length_not_checked,
    # seventh round
    "concurrent-duplicate-500": chk_concurrent_duplicate_500,
    "delayed-payment-notification-expired": chk_delayed_payment_notification_expired,
    "callback-needs-live-token": chk_callback_needs_live_token,
    "consent-token-short-lived": chk_consent_token_short_lived,
    "refund-cap-compared-as-text": chk_refund_cap_compared_as_text,
    "notification-cooldown-per-token": chk_notification_cooldown_per_token,
    "msisdn-national-format-accepted": chk_msisdn_national_format_accepted,
    "callback-header-name-case-sensitive": chk_callback_header_name_case_sensitive,
    "foreign-product-key-403": chk_foreign_product_key_403,
    "deposit-payer-field-accepted": chk_deposit_payer_field_accepted,
    "bc-authorize-answers-202": chk_bc_authorize_answers_202,
    "token-expires-in-fractional": chk_token_expires_in_fractional,
    "userinfo-credit-score-number": chk_userinfo_credit_score_number,
    "callback-host-read-from-userinfo": chk_callback_host_read_from_userinfo,
    "test-numbers-matched-by-suffix": chk_test_numbers_matched_by_suffix,
    "timeout-status-instead-of-failed": chk_timeout_status_instead_of_failed,
    "pending-record-has-transaction-id": chk_pending_record_has_transaction_id,
    "msisdn-plus-stripped": chk_msisdn_plus_stripped,
    "apikey-rebinds-product": chk_apikey_rebinds_product,
    "final-records-archived-without-texts": chk_final_records_archived_without_texts,
}

# Scenarios that need other timings than the default start flags; the plain server of the
# comparison is started with the same flags.
CHECK_ARGS = {
    "callback-needs-live-token": ["--token-lifetime", "2", "--delayed-approval-seconds", "3"],
    "consent-token-short-lived": ["--token-lifetime", "3"],
}


def listed_profiles():
    out = subprocess.run([sys.executable, os.path.join(HERE, "server.py"), "--list-deviations"],
                         capture_output=True, text=True, check=True)
    table = {}
    for line in out.stdout.strip().splitlines():
        cols = line.split("\t")
        assert len(cols) == 4 and cols[1].startswith("profiles=") and cols[2].startswith("clause: ") \
            and cols[3].startswith("effect: "), line
        table[cols[0]] = cols[1][len("profiles="):].split(",")
    return table


def run(fn, c, rx):
    try:
        return bool(fn(Ctx(c, KEYS, rx))), None
    except Exception as exc:
        return None, repr(exc)


def main(argv):
    t0 = time.time()
    names = argv or list(CHECKS)
    table = listed_profiles()
    rx = Receiver()
    plain = {p: start_server(p) for p in ("spec", "mtn-sandbox")}
    failures = []
    results = []
    lock = threading.Lock()

    def one(name, profile):
        extra = CHECK_ARGS.get(name, [])
        p, c = start_server(profile, ["--deviation", name] + extra)
        try:
            dev_seen, dev_err = run(CHECKS[name], c, rx)
        finally:
            stop_server(p)
        if extra:
            pp, pc = start_server(profile, extra)
            try:
                plain_seen, plain_err = run(CHECKS[name], pc, rx)
            finally:
                stop_server(pp)
        else:
            plain_seen, plain_err = run(CHECKS[name], plain[profile][1], rx)
        ok = dev_seen is True and plain_seen is False
        line = "%-4s %-40s %-12s deviation=%s plain=%s%s" % (
            "ok" if ok else "FAIL", name, profile, dev_seen, plain_seen,
            "".join(" (%s error: %s)" % (w, e) for w, e in (("deviation", dev_err), ("plain", plain_err)) if e))
        with lock:
            results.append(line)
            if not ok:
                failures.append(line)

    jobs = []
    for name in names:
        if name not in CHECKS:
            failures.append("no check for %s" % name)
            continue
        if name not in table:
            failures.append("%s is not listed by --list-deviations" % name)
            continue
        for profile in table[name]:
            jobs.append((name, profile))
    try:
        with ThreadPoolExecutor(max_workers=8) as ex:
            list(ex.map(lambda j: one(*j), jobs))
    finally:
        for p, _ in plain.values():
            stop_server(p)
        rx.httpd.shutdown()
    for line in sorted(results):
        print(line)
    print("%d checks (deviation x profile), %d failed, %.1f s" % (len(jobs), len(failures), time.time() - t0))
    for f in failures:
        if f not in results:
            print("FAIL", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
