package momo;

import com.sun.net.httpserver.Headers;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.math.BigDecimal;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.*;
import java.util.concurrent.*;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** An in-memory MoMo Open API server (collection, disbursement, remittance, sandbox provisioning). */
public final class Server {
    static final int MAX_BODY = 1 << 20;
    static final String JSON_TYPE = "application/json;charset=utf-8";
    static final String[] TEST_REASONS_MTN = {
        "PAYER_NOT_FOUND", "PAYEE_NOT_ALLOWED_TO_RECEIVE", "NOT_ALLOWED", "NOT_ALLOWED_TARGET_ENVIRONMENT",
        "INVALID_CALLBACK_URL_HOST", "INVALID_CURRENCY", "INTERNAL_PROCESSING_ERROR", "SERVICE_UNAVAILABLE",
        "COULD_NOT_PERFORM_TRANSACTION"};
    static final Pattern UUID_ANY = Pattern.compile("[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}");
    static final Pattern UUID_V4 = Pattern.compile("[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-4[0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}");
    static final Pattern EMAIL = Pattern.compile("[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+");
    static final Pattern HOSTNAME = Pattern.compile("[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*");
    static final Pattern AMOUNT = Pattern.compile("[0-9]+(\\.[0-9]+)?");

    final Config cfg;
    final Jwt jwt = new Jwt();
    final Object lock = new Object();
    final SecureRandom rnd = new SecureRandom();
    final ScheduledExecutorService sched;
    final ExecutorService cbPool;
    final HttpClient http;
    HttpServer server;

    // ---------------------------------------------------------------- model
    static final class ApiUser {
        String id, host, product, env;
        final List<String> keys = new ArrayList<>();
    }
    static final class Token {
        String jti, kind, userId, product; long exp; boolean revoked; AuthReq req;
        String viaRefresh; // deviation userinfo-sub-changes-after-refresh: the refresh token this consent token came from
    }
    static final class Txn {
        String id, key, kind, ownerId, externalId, currency, payerMessage, payeeNote, refundOf, callbackUrl, finId;
        BigDecimal amount; Map<String, Object> party;
        String status = "PENDING", reason;
        long created, completedAt, lastNotification = -1;
        boolean viaBasic, reasonRead; // deviations basic-auth-payment-no-callback, failed-reason-read-once
        BigDecimal fundsAtAccept; // deviation deposit-funds-checked-at-acceptance
        byte[] body; boolean statusRead; // deviations identical-retry-accepted, notification-needs-status-read
        boolean held; // control deposit-funds-held-while-pending: the amount was taken at acceptance
    }
    static final class AuthReq {
        String id, userId, hint, hintType, accessType, callbackUrl, decision;
        List<String> scopes; long validity, created, expiresAt, decideAt, consentEnd, lastPoll = -1;
        int interval; boolean redeemed; Map<String, Object> pushed;
        final List<String> tokens = new ArrayList<>(), refreshes = new ArrayList<>();
    }
    static final class Refresh { String token; AuthReq req; long exp; boolean revoked; }

    final Map<String, ApiUser> users = new HashMap<>();
    final Map<String, Token> tokens = new HashMap<>();
    final Map<String, Txn> txns = new HashMap<>();
    final Map<String, AuthReq> authReqs = new HashMap<>();
    final Map<String, Refresh> refreshes = new HashMap<>();
    final Map<String, BigDecimal> balances = new HashMap<>();
    /** Deviation invalid-payment-reserves-id: reference ids kept by refused requests to pay. */
    final Set<String> reservedIds = new HashSet<>();
    /** Deviation balance-cached: the last balance answer per user, product and currency, with its time. */
    final Map<String, Object[]> balanceCache = new HashMap<>();
    /** Deviation apiuser-get-shows-latest-host: the host of the API user created last. */
    String lastCreatedHost;
    /** Deviation consent-token-cached-per-client: the last consent token record per API user, with its Token. */
    final Map<String, Object[]> consentCache = new HashMap<>();
    Token lastConsentToken;
    /** Deviation test-outcome-consumed-once: API user and test number pairs already used. */
    final Set<String> usedOutcomes = new HashSet<>();
    /** Deviation callback-body-from-latest-completion: each API user's most recently finished transaction. */
    final Map<String, Txn> lastFinished = new HashMap<>();
    /** Deviation holder-answer-cached-per-user: the last account-holder answer per API user and product, with its time. */
    final Map<String, Object[]> holderCache = new HashMap<>();

    // ---------------------------------------------------------------- responses
    static final class Resp {
        int status; String ctype; byte[] body = new byte[0];
        final Map<String, String> headers = new LinkedHashMap<>();
        Resp(int status) { this.status = status; }
        Resp header(String k, String v) { headers.put(k, v); return this; }
    }
    static final class Fail extends RuntimeException {
        final Resp r;
        Fail(Resp r) { super(null, null, false, false); this.r = r; }
    }
    static Resp json(int status, Object body) {
        Resp r = new Resp(status);
        r.ctype = JSON_TYPE;
        r.body = Json.write(body).getBytes(StandardCharsets.UTF_8);
        return r;
    }
    static Resp empty(int status) { return new Resp(status); }

    static final Map<String, String> MTN_TEXT = Map.of(
        "RESOURCE_NOT_FOUND", "Requested resource was not found.",
        "RESOURCE_ALREADY_EXIST", "Duplicated reference id. Creation of resource failed.",
        "INVALID_CALLBACK_URL_HOST", "Callback URL does not match the configured value.",
        "INVALID_CURRENCY", "Currency not supported.");

    /** A business error {code, message}. */
    Fail err(int status, String code, String message) {
        if (cfg.mtn() && MTN_TEXT.containsKey(code)) message = MTN_TEXT.get(code);
        return new Fail(json(status, Json.obj("code", code, "message", message)));
    }
    /** A 400: text/plain explanation (spec), empty body (mtn-sandbox). */
    Fail bad(String why) {
        Resp r = new Resp(400);
        if (cfg.spec()) { r.ctype = "text/plain;charset=utf-8"; r.body = why.getBytes(StandardCharsets.UTF_8); }
        return new Fail(r);
    }
    /** An {error} body. */
    static Fail oauth(int status, String error) {
        return new Fail(json(status, Json.obj("error", error)));
    }

    // ---------------------------------------------------------------- request context
    final class Ctx {
        HttpExchange ex; String method; List<String> seg; byte[] body; String product;
        boolean acceptExpired; // deviation expired-token-accepted-on-status
        String h(String name) {
            String v = ex.getRequestHeaders().getFirst(name);
            return v == null ? null : v.trim();
        }
        String bodyText() { return new String(body, StandardCharsets.UTF_8); }
    }

    Server(Config cfg) {
        this.cfg = cfg;
        ThreadFactory tf = r -> { Thread t = new Thread(r); t.setDaemon(true); return t; };
        sched = Executors.newScheduledThreadPool(4, tf);
        cbPool = Executors.newCachedThreadPool(tf);
        http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).followRedirects(HttpClient.Redirect.NEVER).build();
    }

    // ---------------------------------------------------------------- main
    static volatile int exitStatus = 0;

    public static void main(String[] args) {
        Config cfg;
        try { cfg = Config.parse(args); }
        catch (Config.BadOption e) { System.err.println(e.getMessage()); System.err.flush(); System.exit(2); return; }
        if (cfg.listControls) {
            for (Config.Control c : Config.CONTROLS.values())
                System.out.println(c.name + "\t" + c.profiles + "\t" + c.clause + "\t" + c.effect);
            System.out.flush();
            System.exit(0);
        }
        if (cfg.listDeviations) {
            for (Config.Deviation d : Config.DEVIATIONS.values())
                System.out.println(d.name + "\tprofiles=" + d.profiles + "\tclause: " + d.clause + "\teffect: " + d.effect);
            System.out.flush();
            System.exit(0);
        }
        // SIGTERM / SIGINT: the shutdown hook ends the process with status 0 (or the status set before System.exit)
        Runtime.getRuntime().addShutdownHook(new Thread(() -> Runtime.getRuntime().halt(exitStatus)));
        Server s = new Server(cfg);
        try { s.start(); }
        catch (IOException e) {
            System.err.println("cannot listen on 127.0.0.1:" + cfg.port + " (" + e.getMessage() + "); choose another --port");
            System.err.flush();
            exitStatus = 2;
            System.exit(2);
        }
        System.out.println("listening on http://127.0.0.1:" + s.server.getAddress().getPort());
        System.out.flush();
    }

    void start() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), cfg.port), 128);
        server.setExecutor(Executors.newFixedThreadPool(16, r -> { Thread t = new Thread(r); t.setDaemon(false); return t; }));
        server.createContext("/", this::handle);
        server.start();
    }

    // ---------------------------------------------------------------- dispatch
    void handle(HttpExchange ex) {
        Resp r;
        boolean close = cfg.on("connection-close");
        try {
            r = dispatch(ex);
        } catch (Fail f) {
            r = f.r;
        } catch (TooLarge t) {
            close = true;
            r = cfg.spec() ? new Resp(413) : new Resp(400);
            if (cfg.spec()) { r.ctype = "text/plain;charset=utf-8"; r.body = "request body over 1 MiB".getBytes(StandardCharsets.UTF_8); }
        } catch (Throwable t) {
            r = json(500, Json.obj("code", "INTERNAL_PROCESSING_ERROR", "message", "An internal error occurred."));
        }
        try {
            Headers h = ex.getResponseHeaders();
            for (Map.Entry<String, String> e : r.headers.entrySet()) h.set(e.getKey(), e.getValue());
            if (r.ctype != null) h.set("Content-Type", r.ctype);
            if (close) h.set("Connection", "close");
            if (r.body.length == 0) ex.sendResponseHeaders(r.status, -1);
            else {
                ex.sendResponseHeaders(r.status, r.body.length);
                try (OutputStream os = ex.getResponseBody()) { os.write(r.body); }
            }
        } catch (IOException ignored) {
        } finally {
            ex.close();
        }
    }

    static final class TooLarge extends RuntimeException { TooLarge() { super(null, null, false, false); } }

    static final long DRAIN_LIMIT = 64L << 20;

    /** Reads the body; over 1 MiB it is read on and thrown away (up to 64 MiB, so the client sees the answer
     *  rather than a reset connection) and TooLarge is thrown. */
    byte[] readBody(HttpExchange ex) throws IOException {
        String cl = ex.getRequestHeaders().getFirst("Content-Length");
        InputStream in = ex.getRequestBody();
        byte[] buf = new byte[8192];
        if (cl != null) {
            long len = -1;
            try { len = Long.parseLong(cl.trim()); } catch (NumberFormatException e) { /* the HTTP layer checks it */ }
            if (len > MAX_BODY) {
                if (len <= DRAIN_LIMIT) while (in.read(buf) > 0) { /* discard */ }
                throw new TooLarge();
            }
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int n;
        long total = 0;
        while ((n = in.read(buf)) > 0) {
            total += n;
            if (total > MAX_BODY) {
                while (total <= DRAIN_LIMIT && (n = in.read(buf)) > 0) total += n;
                throw new TooLarge();
            }
            out.write(buf, 0, n);
        }
        return out.toByteArray();
    }

    interface H { Resp run(Ctx c); }

    Resp dispatch(HttpExchange ex) throws IOException {
        Ctx c = new Ctx();
        c.ex = ex;
        c.method = ex.getRequestMethod();
        String raw = ex.getRequestURI().getRawPath();
        if (raw == null || !raw.startsWith("/")) return notFound();
        List<String> seg = new ArrayList<>();
        for (String s : raw.substring(1).split("/", -1)) seg.add(pctDecode(s));
        c.seg = seg;
        String[] allowed = new String[1];
        H h = route(c, allowed);
        if (h == null && allowed[0] == null) return notFound();
        c.body = readBody(ex);
        if (h == null)
            return json(405, Json.obj("code", "NOT_ALLOWED", "message", "Method " + c.method + " is not allowed here.")).header("Allow", allowed[0]);
        boolean userinfo = seg.size() == 4 && seg.get(1).equals("oauth2") && seg.get(2).equals("v1_0") && seg.get(3).equals("userinfo");
        if (!(cfg.dev("userinfo-without-subscription-key") && userinfo)) gateway(c);
        boolean disbTxn = "disbursement".equals(c.product) && seg.size() >= 3 && seg.get(1).equals("v1_0")
            && (seg.get(2).equals("refund") || seg.get(2).equals("deposit"));
        try {
            synchronized (lock) { return h.run(c); }
        } catch (Fail f) {
            if (cfg.dev("disbursement-errors-without-message") && disbTxn) withoutMessage(f.r);
            throw f;
        }
    }

    /** Deviation disbursement-errors-without-message: a {code, message} body loses its message. */
    static void withoutMessage(Resp r) {
        if (r.body.length == 0 || r.ctype == null || !r.ctype.startsWith("application/json")) return;
        try {
            Object o = Json.parse(new String(r.body, StandardCharsets.UTF_8));
            if (o instanceof Map && ((Map<?, ?>) o).containsKey("code")) {
                ((Map<?, ?>) o).remove("message");
                r.body = Json.write(o).getBytes(StandardCharsets.UTF_8);
            }
        } catch (Json.ParseException ignored) { }
    }

    Resp notFound() {
        if (cfg.mtn()) return json(404, Json.obj("statusCode", 404, "message", "Resource not found"));
        return json(404, Json.obj("code", "NOT_FOUND", "message", "No operation is served at this path."));
    }

    String pctDecode(String s) {
        if (s.indexOf('%') < 0) return s;
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        for (int i = 0; i < s.length(); i++) {
            char ch = s.charAt(i);
            if (ch == '%') {
                if (i + 2 >= s.length()) throw bad("malformed percent-encoding in the path");
                try { b.write(Integer.parseInt(s.substring(i + 1, i + 3), 16)); }
                catch (NumberFormatException e) { throw bad("malformed percent-encoding in the path"); }
                i += 2;
            } else b.write(ch);
        }
        return b.toString(StandardCharsets.UTF_8);
    }

    /** Finds the handler; when only the method is wrong, allowed[0] names the right one. */
    H route(Ctx c, String[] allowed) {
        List<String> s = c.seg;
        int n = s.size();
        String m = c.method;
        String p0 = s.get(0);
        H h = null; String want = null;
        if (Arrays.asList(Config.PRODUCTS).contains(p0)) {
            c.product = p0;
            boolean slash = n > 1 && s.get(n - 1).isEmpty();
            List<String> t = slash && cfg.mtn() ? s.subList(0, n - 1) : s; // mtn-sandbox: trailing slash optional on token paths
            if (is(s, p0, "token", "") || (cfg.mtn() && is(t, p0, "token"))) { want = "POST"; h = this::token; }
            else if (is(s, p0, "oauth2", "token", "") || (cfg.mtn() && is(t, p0, "oauth2", "token"))) { want = "POST"; h = this::oauthToken; }
            else if (is(s, p0, "oauth2", "v1_0", "userinfo")) { want = "GET"; h = this::userinfo; }
            else if (is(s, p0, "v1_0", "bc-authorize")) { want = "POST"; h = this::bcAuthorize; }
            else if (is(s, p0, "v1_0", "account", "balance")) { want = "GET"; h = this::balance; }
            else if (n == 5 && is(s.subList(0, 4), p0, "v1_0", "account", "balance") && !s.get(4).isEmpty()) { want = "GET"; h = this::balance; }
            else if (n == 6 && is(s.subList(0, 3), p0, "v1_0", "accountholder") && s.get(3).equals("msisdn") && s.get(5).equals("basicuserinfo")) { want = "GET"; h = this::basicUserInfo; }
            else if (n == 6 && is(s.subList(0, 3), p0, "v1_0", "accountholder") && s.get(5).equals("active")) { want = "GET"; h = this::active; }
            else if (p0.equals("collection") && is(s, p0, "v1_0", "requesttopay")) { want = "POST"; h = c2 -> create(c2, "requesttopay"); }
            else if (p0.equals("collection") && n == 4 && is(s.subList(0, 3), p0, "v1_0", "requesttopay")) { want = "GET"; h = c2 -> status(c2, "requesttopay"); }
            else if (p0.equals("collection") && n == 5 && is(s.subList(0, 3), p0, "v1_0", "requesttopay") && s.get(4).equals("deliverynotification")) { want = "POST"; h = this::deliveryNotification; }
            else if (p0.equals("disbursement") && n >= 3 && n <= 4 && s.get(1).equals("v1_0") && (s.get(2).equals("refund") || s.get(2).equals("deposit"))) {
                String kind = s.get(2);
                if (n == 3) { want = "POST"; h = c2 -> create(c2, kind); }
                else { want = "GET"; h = c2 -> status(c2, kind); }
            }
        } else if (p0.equals("v1_0") && n >= 2 && s.get(1).equals("apiuser")) {
            c.product = null;
            if (n == 2) { want = "POST"; h = this::createApiUser; }
            else if (n == 3) { want = "GET"; h = this::getApiUser; }
            else if (n == 4 && s.get(3).equals("apikey")) { want = "POST"; h = this::createApiKey; }
        }
        if (h == null) return null;
        if (!want.equals(m)) { allowed[0] = want; return null; }
        return h;
    }

    static boolean is(List<String> s, String... parts) {
        if (s.size() != parts.length) return false;
        for (int i = 0; i < parts.length; i++) if (!s.get(i).equals(parts[i])) return false;
        return true;
    }

    // ---------------------------------------------------------------- gateway and authentication
    void gateway(Ctx c) {
        String key = c.h("Ocp-Apim-Subscription-Key");
        boolean ok;
        if (c.product == null) { String p = cfg.productOfKey(key); ok = p != null; c.product = p; }
        else ok = key != null && key.equals(cfg.keys.get(c.product));
        if (ok) return;
        boolean missing = key == null || key.isEmpty();
        if (cfg.mtn())
            throw new Fail(json(401, Json.obj("statusCode", 401, "message", missing
                ? "Access denied due to missing subscription key. Make sure to include subscription key when making requests to an API."
                : "Access denied due to invalid subscription key. Make sure to provide a valid key for an active subscription.")));
        throw oauth(401, missing ? "subscription_key_missing" : "subscription_key_not_valid_for_product");
    }

    /** Basic credentials of an API user; null when the header is absent or malformed. */
    String[] basicCreds(Ctx c) {
        String a = c.h("Authorization");
        if (a == null || a.length() < 6 || !a.regionMatches(true, 0, "Basic ", 0, 6)) return null;
        try {
            String dec = new String(Base64.getDecoder().decode(a.substring(6).trim()), StandardCharsets.UTF_8);
            int i = dec.indexOf(':');
            if (i <= 0) return null;
            return new String[]{dec.substring(0, i), dec.substring(i + 1)};
        } catch (IllegalArgumentException e) { return null; }
    }

    ApiUser userByCreds(String[] cr) {
        if (cr == null) return null;
        ApiUser u = users.get(normId(cr[0]));
        if (u != null && cfg.dev("token-empty-key-before-apikey") && u.keys.isEmpty() && cr[1].isEmpty()) return u;
        if (u == null || !u.keys.contains(cr[1])) return null;
        return u;
    }

    /** The API user behind a Bearer access token of this product (or, where allowed, Basic credentials). */
    ApiUser caller(Ctx c, boolean allowBasic) {
        String a = c.h("Authorization");
        if (a == null || a.isEmpty()) throw oauth(401, "access_token_missing");
        if (a.regionMatches(true, 0, "Bearer ", 0, 7)) {
            Token t = tokenOf(a.substring(7).trim());
            if (t == null) throw oauth(cfg.dev("invalid-token-403") ? 403 : 401, "access_token_not_valid");
            if (!t.kind.equals("access")) throw oauth(401, "access_token_required");
            if (t.revoked) throw oauth(401, "access_token_revoked");
            if (System.currentTimeMillis() >= t.exp && !c.acceptExpired) throw oauth(401, "access_token_expired");
            if (!t.product.equals(c.product)) throw oauth(401, "access_token_of_another_product");
            ApiUser u = users.get(t.userId);
            if (u == null) throw oauth(401, "access_token_not_valid");
            return u;
        }
        if (allowBasic && a.regionMatches(true, 0, "Basic ", 0, 6)) {
            ApiUser u = userByCreds(basicCreds(c));
            if (u == null) throw oauth(401, "api_user_credentials_not_valid");
            if (!u.product.equals(c.product)) throw oauth(401, "api_user_of_another_product");
            return u;
        }
        throw oauth(401, "authorization_scheme_not_accepted");
    }

    Token tokenOf(String jwtText) {
        Map<String, Object> claims = jwt.verify(jwtText);
        if (claims == null || !(claims.get("jti") instanceof String)) return null;
        return tokens.get((String) claims.get("jti"));
    }

    void envPresent(Ctx c, boolean required) {
        String e = c.h("X-Target-Environment");
        if ((e == null || e.isEmpty()) && required) throw bad("X-Target-Environment header is required");
    }
    void envValue(Ctx c) {
        String e = c.h("X-Target-Environment");
        if (e != null && !e.isEmpty() && !e.equals(cfg.targetEnvironment))
            throw err(500, "NOT_ALLOWED_TARGET_ENVIRONMENT", "Access to target environment '" + e + "' is not allowed.");
    }

    /** Identifiers: spec profile treats them case-insensitively, mtn-sandbox exactly as sent. */
    String normId(String id) { return cfg.spec() ? id.toLowerCase(Locale.ROOT) : id; }

    String refHeader(Ctx c) {
        String id = c.h("X-Reference-Id");
        if (id == null || id.isEmpty()) throw bad("X-Reference-Id header is required");
        if (!UUID_V4.matcher(id).matches()) throw bad("X-Reference-Id must be a UUID version 4");
        return normId(id);
    }
    String pathUuid(String id, boolean v4) {
        if (!(v4 ? UUID_V4 : UUID_ANY).matcher(id).matches()) throw bad("the id in the path must be a UUID" + (v4 ? " version 4" : ""));
        return normId(id);
    }

    // ---------------------------------------------------------------- bodies
    void contentType(Ctx c, boolean form) {
        if (!cfg.spec()) return;
        String ct = c.h("Content-Type");
        if (ct == null || ct.isEmpty()) return;
        String mt = ct.split(";", 2)[0].trim().toLowerCase(Locale.ROOT);
        if (form ? !mt.equals("application/x-www-form-urlencoded") : !(mt.equals("application/json") || mt.endsWith("+json")))
            throw bad("Content-Type must be " + (form ? "application/x-www-form-urlencoded" : "application/json"));
    }

    @SuppressWarnings("unchecked")
    Map<String, Object> jsonBody(Ctx c) {
        contentType(c, false);
        String t = c.bodyText();
        if (t.trim().isEmpty()) throw bad("a JSON body is required");
        Object o;
        try { o = Json.parse(t); } catch (Json.ParseException e) { throw bad("malformed JSON: " + e.getMessage()); }
        if (!(o instanceof Map)) throw bad("the body must be a JSON object");
        return (Map<String, Object>) o;
    }

    Map<String, String> formBody(Ctx c) {
        contentType(c, true);
        Map<String, String> f = new LinkedHashMap<>();
        String t = c.bodyText().trim();
        if (t.isEmpty()) return f;
        for (String pair : t.split("&")) {
            if (pair.isEmpty()) continue;
            int i = pair.indexOf('=');
            String k = i < 0 ? pair : pair.substring(0, i), v = i < 0 ? "" : pair.substring(i + 1);
            try {
                k = java.net.URLDecoder.decode(k, StandardCharsets.UTF_8);
                v = java.net.URLDecoder.decode(v, StandardCharsets.UTF_8);
            } catch (IllegalArgumentException e) { throw bad("malformed form encoding"); }
            if (f.containsKey(k)) throw bad("form parameter '" + k + "' is repeated");
            f.put(k, v);
        }
        return f;
    }

    String optText(Map<String, Object> b, String name) {
        Object v = b.get(name);
        if (v == null) return null;
        if (cfg.dev("external-id-number-accepted") && name.equals("externalId") && v instanceof BigDecimal) return ((BigDecimal) v).toPlainString();
        if (!(v instanceof String)) throw bad(name + " must be a string");
        String s = (String) v;
        if (cfg.spec()) {
            if (s.length() > 255) throw bad(name + " is longer than 255 characters");
        } else {
            if (!name.equals("externalId") && s.length() > 160) throw bad(name + " is longer than 160 characters");
            if (s.indexOf('\'') >= 0 || s.indexOf('&') >= 0) throw bad(name + " may not contain an apostrophe or '&'");
        }
        return s;
    }

    BigDecimal amount(Object v) {
        String s;
        // Changed by the project after the blind run (README, "After the blind run"): the mtn-sandbox mode read a JSON
        // number as an amount, which the notes do not record of the live service; §2.2 gives amount as a string.
        if (v instanceof String) s = (String) v;
        else throw bad(v == null ? "amount is required" : "amount must be a string");
        if (!AMOUNT.matcher(s).matches()) throw bad("amount must be a positive decimal number like \"12.50\"");
        BigDecimal a = new BigDecimal(s);
        if (a.signum() <= 0) throw bad("amount must be more than zero");
        BigDecimal st = a.stripTrailingZeros();
        if (cfg.spec() && st.scale() > 4) throw bad("amount may have at most 4 decimals");
        if (st.precision() - st.scale() > (cfg.spec() ? 12 : 15)) throw bad("amount is too large");
        return a;
    }

    String currency(Object v) {
        if (!(v instanceof String)) throw bad(v == null ? "currency is required" : "currency must be a string");
        String s = (String) v;
        if (!s.matches(cfg.spec() ? "[A-Z]{3}" : "[A-Za-z]{3}")) throw bad("currency must be an ISO 4217 code");
        return s;
    }

    String msisdnCheck(String id) {
        boolean ok = cfg.spec() ? id.matches("[1-9][0-9]{6,14}") : id.matches("\\+?[0-9]{5,15}");
        if (!ok) throw bad("'" + id + "' is not an MSISDN (ITU-T E.164 digits" + (cfg.spec() ? ", no '+'" : "") + ")");
        return id;
    }

    void partyIdCheck(String type, String id) {
        switch (type) {
            case "MSISDN": msisdnCheck(id); break;
            case "EMAIL": if (id.length() > 254 || !EMAIL.matcher(id).matches()) throw bad("'" + id + "' is not an e-mail address"); break;
            case "PARTY_CODE": if (!UUID_ANY.matcher(id).matches()) throw bad("a PARTY_CODE must be a UUID"); break;
            default: throw bad("partyIdType must be MSISDN, EMAIL or PARTY_CODE");
        }
    }

    @SuppressWarnings("unchecked")
    Map<String, Object> party(Object v, String name) {
        if (!(v instanceof Map)) throw bad(name + " is required and must be an object");
        Map<String, Object> m = (Map<String, Object>) v;
        if (m.isEmpty() && cfg.dev("empty-party-500")) throw err(500, "INTERNAL_PROCESSING_ERROR", "An internal error occurred.");
        Object t = m.get("partyIdType"), id = m.get("partyId");
        if (!(t instanceof String)) throw bad(name + ".partyIdType is required");
        if (!(id instanceof String)) throw bad(name + ".partyId is required");
        partyIdCheck((String) t, (String) id);
        return Json.obj("partyIdType", t, "partyId", id);
    }

    String callbackUrl(Ctx c, ApiUser u) { return callbackUrl(c, u, true); }
    String callbackUrl(Ctx c, ApiUser u, boolean checkHost) {
        String url = c.h("X-Callback-Url");
        if (url == null || url.isEmpty()) return null;
        URI uri;
        try { uri = new URI(url); } catch (Exception e) { throw bad("X-Callback-Url is not a valid URL"); }
        String scheme = uri.getScheme();
        if (scheme == null || !(scheme.equalsIgnoreCase("http") || scheme.equalsIgnoreCase("https")) || uri.getHost() == null)
            throw bad("X-Callback-Url must be an absolute http or https URL");
        if (cfg.dev("callback-url-query-refused") && uri.getRawQuery() != null) throw bad("X-Callback-Url may not carry a query string");
        String allowedHost = cfg.mtn() && cfg.dev("callback-host-checked-against-latest-user") && lastCreatedHost != null ? lastCreatedHost : u.host;
        if (checkHost && !sameHost(uri.getHost(), allowedHost))
            throw err(500, "INVALID_CALLBACK_URL_HOST", "The callback host '" + uri.getHost() + "' is not the API user's provider callback host.");
        return url;
    }

    static final Set<String> LOOPBACK = Set.of("localhost", "127.0.0.1", "::1", "[::1]");
    boolean sameHost(String a, String b) {
        if (a == null || b == null) return false;
        if (cfg.mtn() && cfg.dev("callback-host-case-sensitive")) return a.equals(b);
        a = a.toLowerCase(Locale.ROOT); b = b.toLowerCase(Locale.ROOT);
        if (a.equals(b)) return true;
        return cfg.spec() && LOOPBACK.contains(a) && LOOPBACK.contains(b);
    }

    // ---------------------------------------------------------------- provisioning
    Resp createApiUser(Ctx c) {
        String id = refHeader(c);
        if (cfg.dev("apiuser-stored-before-validation") && !users.containsKey(id)) {
            ApiUser early = new ApiUser();
            early.id = id; early.product = c.product; early.env = cfg.targetEnvironment;
            users.put(id, early);
            Map<String, Object> b = jsonBody(c);
            Object h = b.get("providerCallbackHost");
            if (!(h instanceof String) || ((String) h).trim().isEmpty()) throw bad("providerCallbackHost is required");
            String host = ((String) h).trim();
            if (cfg.spec() ? (host.length() > 253 || !HOSTNAME.matcher(host).matches()) : host.length() > 255)
                throw bad("providerCallbackHost must be a host name or IPv4 address (no scheme, port or path)");
            early.host = host;
            lastCreatedHost = host;
            return empty(201);
        }
        Map<String, Object> b = jsonBody(c);
        Object h = b.get("providerCallbackHost");
        if (!(h instanceof String) || ((String) h).trim().isEmpty()) throw bad("providerCallbackHost is required");
        String host = ((String) h).trim();
        if (cfg.spec() ? (host.length() > 253 || !HOSTNAME.matcher(host).matches()) : host.length() > 255)
            throw bad("providerCallbackHost must be a host name or IPv4 address (no scheme, port or path)");
        if (users.containsKey(id) && cfg.dev("apiuser-duplicate-400")) throw bad("the API user could not be created from this request");
        if (users.containsKey(id)) throw err(409, "RESOURCE_ALREADY_EXIST", "An API user with this reference id already exists.");
        ApiUser u = new ApiUser();
        u.id = id; u.host = host; u.product = c.product; u.env = cfg.targetEnvironment;
        users.put(id, u);
        lastCreatedHost = host;
        return empty(201);
    }

    ApiUser pathUser(Ctx c) { return pathUser(c, "RESOURCE_NOT_FOUND"); }
    ApiUser pathUser(Ctx c, String notFoundCode) {
        String id = pathUuid(c.seg.get(2), true);
        ApiUser u = users.get(id);
        if (u == null) throw err(404, notFoundCode, "No API user has this reference id.");
        return u;
    }

    Resp createApiKey(Ctx c) {
        ApiUser u = pathUser(c, cfg.dev("apikey-not-found-code") ? "NOT_FOUND" : "RESOURCE_NOT_FOUND");
        if (cfg.dev("apikey-second-409") && !u.keys.isEmpty()) throw err(409, "RESOURCE_ALREADY_EXIST", "This API user has an API key already.");
        String key;
        if (cfg.spec()) key = hex(20);
        else key = hex(16);
        if (cfg.spec() && cfg.on("api-key-base64url")) {
            byte[] kb = new byte[24];
            rnd.nextBytes(kb);
            key = Base64.getUrlEncoder().withoutPadding().encodeToString(kb);
        }
        if (cfg.on("api-key-upper-case-hex")) key = key.toUpperCase(Locale.ROOT);
        if (cfg.mtn() || cfg.on("api-key-rotates")) u.keys.clear();
        u.keys.add(key);
        return json(201, Json.obj("apiKey", key));
    }

    Resp getApiUser(Ctx c) {
        if (cfg.dev("apiuser-get-requires-authorization")) {
            String a = c.h("Authorization");
            if (a == null || a.isEmpty()) throw oauth(401, "access_token_missing");
        }
        ApiUser u = pathUser(c);
        if (cfg.dev("apiuser-unreadable-after-key") && !u.keys.isEmpty()) throw err(404, "RESOURCE_NOT_FOUND", "No API user has this reference id.");
        String host = cfg.dev("apiuser-get-shows-latest-host") && lastCreatedHost != null ? lastCreatedHost : u.host;
        if (cfg.spec()) return json(200, Json.obj("providerCallbackHost", host, "targetEnvironment", u.env, "product", u.product));
        String env = cfg.dev("apiuser-environment-from-request") ? c.h("X-Target-Environment") : u.env;
        return json(200, Json.obj("providerCallbackHost", host, "targetEnvironment", env));
    }

    // ---------------------------------------------------------------- access tokens
    Resp token(Ctx c) {
        String[] cr = basicCreds(c);
        ApiUser u = userByCreds(cr);
        if (u == null && cr != null && !cr[1].isEmpty() && cfg.dev("token-accepts-other-users-key")) {
            // the key is looked up among the product's keys, not the named user's
            ApiUser named = users.get(normId(cr[0]));
            if (named != null)
                for (ApiUser o : users.values())
                    if (o.product.equals(named.product) && o.keys.contains(cr[1])) { u = named; break; }
        }
        if (u == null) {
            if (cfg.mtn()) throw oauth(500, "login_failed");
            throw oauth(401, basicCreds(c) == null ? "basic_credentials_missing" : "api_user_credentials_not_valid");
        }
        if (!u.product.equals(c.product)) {
            if (cfg.mtn()) throw err(500, "NOT_ALLOWED_TARGET_ENVIRONMENT", "The API user is not provisioned for this product.");
            throw oauth(401, "api_user_of_another_product");
        }
        if (cfg.mtn() && c.body.length > 0) throw bad("the token request takes no body");
        long now = System.currentTimeMillis();
        if (cfg.on("single-live-token"))
            for (Token t : tokens.values())
                if (t.kind.equals("access") && t.userId.equals(u.id) && t.product.equals(c.product)) t.revoked = true;
        Token t = new Token();
        t.jti = UUID.randomUUID().toString(); t.kind = "access"; t.userId = u.id; t.product = c.product;
        long lifetime = cfg.spec() && cfg.on("access-token-10-minutes") ? Math.min(cfg.tokenLifetime, 600) : cfg.tokenLifetime;
        t.exp = now + lifetime * 1000;
        tokens.put(t.jti, t);
        String at = jwt.sign(Json.obj("iss", "momo-blind-java", "sub", u.id, "aud", c.product, "tenv", u.env,
            "iat", now / 1000, "nbf", now / 1000, "exp", t.exp / 1000, "jti", t.jti));
        return json(200, Json.obj("access_token", at, "token_type",
            cfg.spec() || (cfg.dev("token-type-bearer-off-collection") && !c.product.equals("collection")) ? "Bearer" : "access_token",
            "expires_in", cfg.dev("token-expires-in-milliseconds") ? lifetime * 1000 : lifetime)).header("Cache-Control", "no-store");
    }

    // ---------------------------------------------------------------- transactions
    String nsKey(String kind, String id) {
        if (cfg.on("shared-reference-ids")) return "all:" + id;
        if (cfg.spec()) return (kind.equals("requesttopay") ? "collection:" : "disbursement:") + id;
        return kind + ":" + id;
    }

    Resp create(Ctx c, String kind) {
        ApiUser u = caller(c, cfg.spec() && kind.equals("requesttopay"));
        if (cfg.dev("reference-id-upper-case-refused")) {
            String raw = c.h("X-Reference-Id");
            if (raw != null && !raw.equals(raw.toLowerCase(Locale.ROOT))) throw bad("X-Reference-Id must be a UUID version 4");
        }
        String id = refHeader(c);
        if (cfg.dev("invalid-payment-reserves-id") && kind.equals("requesttopay")) {
            // the id is claimed first; only the 400 path forgets to release it
            String key = nsKey(kind, id);
            if (reservedIds.contains(key)) throw err(409, "RESOURCE_ALREADY_EXIST", "This reference id has been used already.");
            try { return createChecked(c, kind, u, id); }
            catch (Fail f) { if (f.r.status == 400) reservedIds.add(key); throw f; }
        }
        return createChecked(c, kind, u, id);
    }

    Resp createChecked(Ctx c, String kind, ApiUser u, String id) {
        envPresent(c, !(cfg.dev("deposit-without-target-environment") && kind.equals("deposit")));
        Map<String, Object> b = jsonBody(c);
        Txn t = new Txn();
        t.id = id; t.kind = kind; t.ownerId = u.id;
        Object av = b.get("amount");
        if (cfg.dev("refund-negative-amount-accepted") && kind.equals("refund") && av instanceof String && ((String) av).startsWith("-"))
            t.amount = amount(((String) av).substring(1)).negate();
        else t.amount = amount(av);
        if (cfg.dev("amount-truncated-to-cents") && t.amount.scale() > 2) t.amount = t.amount.setScale(2, java.math.RoundingMode.DOWN);
        Object cv = b.get("currency");
        if (cfg.dev("currency-case-folded") && cv instanceof String && ((String) cv).matches("[a-z]{3}")) cv = ((String) cv).toUpperCase(Locale.ROOT);
        t.currency = currency(cv);
        t.externalId = optText(b, "externalId");
        t.payerMessage = optText(b, "payerMessage");
        t.payeeNote = optText(b, "payeeNote");
        if (kind.equals("requesttopay")) t.party = party(b.get("payer"), "payer");
        else if (kind.equals("deposit")) t.party = party(b.get("payee"), "payee");
        else {
            Object r = b.get("referenceIdToRefund");
            if (!(r instanceof String)) throw bad("referenceIdToRefund is required");
            if (!UUID_ANY.matcher((String) r).matches() && !cfg.dev("refund-target-id-not-validated")) throw bad("referenceIdToRefund must be a UUID");
            t.refundOf = normId((String) r);
        }
        envValue(c);
        if (!t.currency.equals(cfg.currency) && !(cfg.dev("refund-currency-not-checked") && kind.equals("refund")))
            throw err(500, cfg.dev("deposit-currency-code-not-allowed") && kind.equals("deposit") ? "NOT_ALLOWED" : "INVALID_CURRENCY",
                "The currency " + t.currency + " is not taken here.");
        try { t.callbackUrl = callbackUrl(c, u); }
        catch (Fail f) {
            if (f.r.status == 500 && kind.equals("refund") && cfg.dev("refund-callback-host-plain-400")) throw bad("X-Callback-Url is not allowed");
            throw f;
        }
        t.key = nsKey(kind, id);
        if (cfg.dev("payment-id-scoped-per-user") && kind.equals("requesttopay")) {
            Txn other = txns.get(t.key);
            if (other != null && !other.ownerId.equals(u.id)) t.key = u.id + "|" + t.key;
        }
        if (txns.containsKey(t.key) && cfg.dev("deposit-duplicate-500") && kind.equals("deposit"))
            throw err(500, "INTERNAL_PROCESSING_ERROR", "An internal error occurred.");
        Txn prior = txns.get(t.key);
        if (prior != null && cfg.dev("identical-retry-accepted") && prior.kind.equals(kind) && prior.ownerId.equals(u.id) && Arrays.equals(prior.body, c.body))
            return empty(202); // taken for an idempotent replay: nothing is created
        if (cfg.dev("refund-target-keyed-409") && kind.equals("refund"))
            for (Txn x : txns.values())
                if (x.kind.equals("refund") && t.refundOf.equals(x.refundOf)) throw err(409, "RESOURCE_ALREADY_EXIST", "This reference id has been used already.");
        if (txns.containsKey(t.key)) throw err(409, "RESOURCE_ALREADY_EXIST", "This reference id has been used already.");
        if (kind.equals("deposit") && cfg.on("deposit-funds-refused-at-creation") && balance(u.id, "disbursement").compareTo(t.amount) < 0)
            throw err(500, "NOT_ENOUGH_FUNDS", "The disbursement account does not cover this deposit.");
        if (cfg.dev("payment-duplicate-race") && kind.equals("requesttopay")) {
            // a slow step between the duplicate check and the insert, with the store unlocked
            long end = System.currentTimeMillis() + 300, left;
            try { while ((left = end - System.currentTimeMillis()) > 0) lock.wait(left); }
            catch (InterruptedException e) { Thread.currentThread().interrupt(); }
        }
        t.created = System.currentTimeMillis();
        if (kind.equals("deposit")) t.fundsAtAccept = balance(u.id, "disbursement");
        t.body = c.body;
        if (kind.equals("deposit") && cfg.on("deposit-funds-held-while-pending") && balance(u.id, "disbursement").compareTo(t.amount) >= 0) {
            balances.put(u.id + "/disbursement", plus(balance(u.id, "disbursement"), t.amount.negate()));
            t.held = true;
        }
        String auth = c.h("Authorization");
        t.viaBasic = auth != null && auth.regionMatches(true, 0, "Basic ", 0, 6);
        if (kind.equals("refund")) {
            Txn orig = original(t);
            if (orig != null) t.party = Json.obj("partyIdType", orig.party.get("partyIdType"), "partyId", orig.party.get("partyId"));
        }
        if (cfg.spec()) t.finId = digits(12);
        txns.put(t.key, t);
        schedule(t);
        return empty(202);
    }

    Txn original(Txn refund) {
        Txn o = txns.get(nsKey("requesttopay", refund.refundOf));
        if ((o == null || !o.kind.equals("requesttopay")) && cfg.dev("refund-of-deposit-accepted")) {
            Txn d = txns.get(nsKey("deposit", refund.refundOf));
            if (d != null && d.kind.equals("deposit") && d.ownerId.equals(refund.ownerId)) return d;
        }
        return o != null && o.kind.equals("requesttopay") ? o : null;
    }

    static final class Plan {
        final long delayMs; final String status, reason;
        Plan(double seconds, String status, String reason) { this.delayMs = Math.round(seconds * 1000); this.status = status; this.reason = reason; }
    }

    Plan plan(Txn t) {
        String d = null;
        if (t.party != null && "MSISDN".equals(t.party.get("partyIdType"))) d = ((String) t.party.get("partyId")).replace("+", "");
        boolean disb = !t.kind.equals("requesttopay");
        double ordinary = cfg.spec() ? (disb && cfg.on("slow-disbursements") ? 6 : 2) : 0;
        if (d != null && d.startsWith("467331234") && d.length() == 11) {
            int n = Integer.parseInt(d.substring(8));
            if (cfg.mtn() && cfg.dev("test-outcome-consumed-once") && t.kind.equals("requesttopay") && n >= 450 && n <= 452
                && !usedOutcomes.add(t.ownerId + "|" + d)) return new Plan(0, "SUCCESSFUL", null);
            if (n == 453 && cfg.mtn() && cfg.dev("ongoing-number-times-out-early")) return new Plan(10, "FAILED", "EXPIRED");
            switch (n) {
                case 450: return new Plan(cfg.spec() ? ordinary : 0, "FAILED", "INTERNAL_PROCESSING_ERROR");
                case 451: return new Plan(cfg.spec() ? 3 : 0, "FAILED", "APPROVAL_REJECTED");
                case 452: return new Plan(cfg.spec() ? 6 : 4, "FAILED", "EXPIRED");
                case 453: return new Plan(cfg.pendingTimeoutSeconds, "FAILED", "EXPIRED");
                case 454: return new Plan(cfg.delayedApprovalSeconds, "SUCCESSFUL", null);
                default:
                    if (cfg.mtn() && n >= 455 && n <= 463) return new Plan(0, "FAILED", TEST_REASONS_MTN[n - 455]);
            }
        }
        return new Plan(ordinary, "SUCCESSFUL", null);
    }

    void schedule(Txn t) {
        Plan p = plan(t);
        if (p.delayMs <= 0) finish(t, p);
        else sched.schedule(() -> { synchronized (lock) { finish(t, p); } }, p.delayMs, TimeUnit.MILLISECONDS);
    }

    BigDecimal balance(String userId, String product) {
        return balances.computeIfAbsent(userId + "/" + product,
            k -> product.equals("disbursement") ? new BigDecimal("1000000") : BigDecimal.ZERO);
    }

    void finish(Txn t, Plan p) {
        if (!t.status.equals("PENDING")) return;
        String status = p.status, reason = p.reason;
        if (t.kind.equals("refund")) {
            Txn o = original(t);
            if (o == null) { status = "FAILED"; reason = "RESOURCE_NOT_FOUND"; }
            else if (!o.status.equals("SUCCESSFUL")) { status = "FAILED"; reason = "PAYMENT_NOT_APPROVED"; }
            else if (status.equals("SUCCESSFUL") && cfg.on("refund-capped")) {
                BigDecimal sum = t.amount;
                for (Txn x : txns.values())
                    if (x.kind.equals("refund") && x != t && x.status.equals("SUCCESSFUL") && x.refundOf.equals(t.refundOf)) sum = sum.add(x.amount);
                if (sum.compareTo(o.amount) > 0) { status = "FAILED"; reason = "NOT_ALLOWED"; }
            }
        }
        if (status.equals("SUCCESSFUL")) {
            if (t.kind.equals("requesttopay")) {
                BigDecimal credit = t.amount;
                if (cfg.dev("ledger-int-overflow")) {
                    BigDecimal whole = new BigDecimal(t.amount.toBigInteger());
                    credit = BigDecimal.valueOf(whole.toBigInteger().intValue()).add(t.amount.subtract(whole));
                }
                boolean late = cfg.dev("delayed-payment-not-credited") && System.currentTimeMillis() - t.created > 5_000;
                if (!late) balances.put(t.ownerId + "/collection", plus(balance(t.ownerId, "collection"), credit));
            } else if (t.held) {
                // control deposit-funds-held-while-pending: taken at acceptance already
            } else {
                BigDecimal have = balance(t.ownerId, "disbursement");
                BigDecimal moved = t.amount;
                if (cfg.dev("refund-debits-original-amount") && t.kind.equals("refund")) moved = original(t).amount;
                if (cfg.dev("refund-debits-running-total") && t.kind.equals("refund"))
                    for (Txn x : txns.values())
                        if (x != t && x.kind.equals("refund") && x.status.equals("SUCCESSFUL") && x.refundOf.equals(t.refundOf)) moved = moved.add(x.amount);
                BigDecimal covers = cfg.dev("deposit-funds-checked-at-acceptance") && t.kind.equals("deposit") && t.fundsAtAccept != null ? t.fundsAtAccept : have;
                if (covers.compareTo(moved) < 0) { status = "FAILED"; reason = "NOT_ENOUGH_FUNDS"; }
                else if (cfg.dev("deposit-credits-owner") && t.kind.equals("deposit")) balances.put(t.ownerId + "/disbursement", plus(have, moved));
                else balances.put(t.ownerId + "/disbursement", plus(have, moved.negate()));
            }
        }
        if (status.equals("FAILED") && t.held) balances.put(t.ownerId + "/disbursement", plus(balance(t.ownerId, "disbursement"), t.amount));
        if (status.equals("SUCCESSFUL") && t.kind.equals("refund") && cfg.dev("refund-reversal-credits-payment-account")) {
            Txn o = original(t);
            if (o != null && o.kind.equals("requesttopay")) balances.put(o.ownerId + "/collection", plus(balance(o.ownerId, "collection"), t.amount));
        }
        if (status.equals("FAILED") && t.kind.equals("refund") && cfg.dev("failed-refund-still-debited"))
            balances.put(t.ownerId + "/disbursement", plus(balance(t.ownerId, "disbursement"), t.amount.negate()));
        t.status = status;
        t.reason = reason;
        t.completedAt = System.currentTimeMillis();
        if (status.equals("SUCCESSFUL") && t.kind.equals("refund") && cfg.dev("refund-relabels-payment")) {
            Txn o = original(t);
            if (o != null) o.status = "REFUNDED";
        }
        if (status.equals("SUCCESSFUL") && t.finId == null) t.finId = digits(10);
        lastFinished.put(t.ownerId, t);
        if (t.callbackUrl != null && cfg.mtn() && cfg.dev("callback-body-from-latest-completion")) {
            // the callback worker picks the API user's latest finished transaction when it runs
            String method = t.kind.equals("deposit") ? "POST" : "PUT";
            sched.schedule(() -> {
                String text;
                synchronized (lock) { text = Json.write(record(lastFinished.get(t.ownerId))); }
                sendCallback(t.callbackUrl, method, text, t.ownerId);
            }, 1000, TimeUnit.MILLISECONDS);
        } else if (t.callbackUrl != null && !(cfg.dev("basic-auth-payment-no-callback") && t.viaBasic)) {
            Map<String, Object> rec = record(t);
            Map<String, Object> body = rec;
            if (cfg.spec()) { body = Json.obj("referenceId", t.id); body.putAll(rec); }
            if (cfg.dev("callback-reason-as-object") && t.reason != null)
                body.put("reason", Json.obj("code", t.reason, "message", "The transaction failed: " + t.reason + "."));
            if (cfg.mtn() && cfg.dev("callback-status-lower-case")) body.put("status", t.status.toLowerCase(Locale.ROOT));
            String method = cfg.spec() ? (t.kind.equals("requesttopay") ? "POST" : "PUT")
                                       : (t.kind.equals("deposit") ? "POST" : "PUT");
            String text = cfg.mtn() && cfg.dev("deposit-callback-without-body") && t.kind.equals("deposit") ? "" : Json.write(body);
            sendCallback(t.callbackUrl, method, text, t.ownerId);
        }
    }

    /** Ledger addition; deviation balance-in-floating-point does it in binary floating point. */
    BigDecimal plus(BigDecimal a, BigDecimal b) {
        if (cfg.dev("balance-in-floating-point")) return new BigDecimal(Double.toString(a.doubleValue() + b.doubleValue()));
        return a.add(b);
    }

    String amountText(BigDecimal a) {
        BigDecimal s = a.stripTrailingZeros();
        if (cfg.spec() && s.scale() < 2) s = s.setScale(2);
        return s.toPlainString();
    }

    Map<String, Object> record(Txn t) {
        String partyName = t.kind.equals("requesttopay") ? "payer" : "payee";
        Map<String, Object> party = t.party == null ? null : new LinkedHashMap<>(t.party);
        if (cfg.spec() && cfg.on("refund-record-without-payee") && t.kind.equals("refund")) party = null;
        if (cfg.mtn() && cfg.dev("email-party-id-lower-cased") && party != null && "EMAIL".equals(party.get("partyIdType")))
            party.put("partyId", ((String) party.get("partyId")).toLowerCase(Locale.ROOT));
        String payerMessage = t.payerMessage, payeeNote = t.payeeNote;
        if (cfg.dev("payment-texts-swapped") && t.kind.equals("requesttopay")) { payerMessage = t.payeeNote; payeeNote = t.payerMessage; }
        if (cfg.spec())
            return Json.obj("status", t.status, "reason", t.reason, "financialTransactionId", t.finId,
                "amount", amountText(t.amount), "currency", t.currency, "externalId", t.externalId,
                partyName, party, "payerMessage", payerMessage, "payeeNote", payeeNote);
        return Json.obj("financialTransactionId", t.status.equals("SUCCESSFUL") ? t.finId : null,
            "externalId", cfg.dev("deposit-record-external-id-missing") && t.kind.equals("deposit") ? null : t.externalId, "amount", amountText(t.amount), "currency", t.currency,
            partyName, party, "payerMessage", payerMessage, "payeeNote", payeeNote,
            "status", t.status, "reason", t.reason);
    }

    Resp status(Ctx c, String kind) {
        String notFound = cfg.dev("disbursement-not-found-code") && !kind.equals("requesttopay") ? "TRANSACTION_NOT_FOUND" : "RESOURCE_NOT_FOUND";
        if (cfg.dev("status-lookup-before-auth")) {
            String early = pathUuid(c.seg.get(3), false);
            Txn e = txns.get(nsKey(kind, early));
            if (e == null || !e.kind.equals(kind)) throw err(404, notFound, "No " + kind + " with this reference id.");
        }
        c.acceptExpired = cfg.dev("expired-token-accepted-on-status");
        ApiUser u = caller(c, cfg.spec() && cfg.on("basic-auth-on-status-queries"));
        c.acceptExpired = false;
        if (cfg.mtn() && cfg.dev("rtp-status-bad-id-500") && kind.equals("requesttopay") && !UUID_ANY.matcher(c.seg.get(3)).matches())
            throw err(500, "INTERNAL_PROCESSING_ERROR", "An internal error occurred.");
        String id = pathUuid(c.seg.get(3), false);
        envPresent(c, cfg.on("status-needs-target-env"));
        if (!cfg.dev("status-any-environment")) envValue(c);
        Txn t = txns.get(nsKey(kind, id));
        if (cfg.dev("payment-id-scoped-per-user") && kind.equals("requesttopay")) {
            Txn mine = txns.get(u.id + "|" + nsKey(kind, id));
            if (mine != null) t = mine;
        }
        if (cfg.dev("deposit-status-reads-refunds") && kind.equals("deposit") && (t == null || !t.kind.equals(kind))) {
            Txn r = txns.get(nsKey("refund", id));
            if (r != null && r.kind.equals("refund") && r.ownerId.equals(u.id)) return json(200, record(r));
        }
        if (cfg.dev("refund-status-reads-deposits") && kind.equals("refund") && (t == null || !t.kind.equals(kind))) {
            Txn d = txns.get(nsKey("deposit", id));
            if (d != null && d.kind.equals("deposit") && d.ownerId.equals(u.id)) return json(200, record(d));
        }
        if (t == null || !t.kind.equals(kind) || !t.ownerId.equals(u.id))
            throw err(404, notFound, "No " + kind + " with this reference id.");
        t.statusRead = true;
        Map<String, Object> rec = record(t);
        if (cfg.mtn() && cfg.dev("failed-reason-read-once") && t.reason != null) {
            if (t.reasonRead) rec.remove("reason");
            t.reasonRead = true;
        }
        return json(200, rec);
    }

    Resp deliveryNotification(Ctx c) {
        ApiUser u = caller(c, false);
        String id = pathUuid(c.seg.get(3), false);
        String lang = c.h("Language");
        if (cfg.spec() && lang != null && !lang.matches("[a-z]{2,3}")) throw bad("Language must be an ISO 639-1 or 639-3 code");
        envPresent(c, true);
        Map<String, Object> b = jsonBody(c);
        Object m = b.get("notificationMessage");
        if (cfg.dev("notification-message-optional") && m == null) m = "";
        else if (!(m instanceof String) || ((String) m).trim().isEmpty()) throw bad("notificationMessage is required");
        int max = cfg.spec() ? 320 : 160;
        if (((String) m).length() > max) throw bad("notificationMessage is longer than " + max + " characters");
        envValue(c);
        Txn t = txns.get(nsKey("requesttopay", id));
        if (cfg.dev("payment-id-scoped-per-user")) {
            Txn mine = txns.get(u.id + "|" + nsKey("requesttopay", id));
            if (mine != null) t = mine;
        }
        long cool = cfg.on("notification-cooldown-long") ? 120_000 : cfg.spec() ? 10_000 : 60_000;
        if (cfg.dev("notification-cooldown-before-owner-check") && t != null && t.kind.equals("requesttopay")
            && t.lastNotification >= 0 && System.currentTimeMillis() - t.lastNotification < cool)
            throw err(429, cfg.spec() ? "RESOURCE_ALREADY_EXIST" : "NOT_ALLOWED", "A notification for this payment was sent a moment ago.");
        if (t == null || !t.kind.equals("requesttopay") || !t.ownerId.equals(u.id))
            throw err(404, cfg.spec() ? "NOT_FOUND" : "RESOURCE_NOT_FOUND", "No request to pay of yours has this reference id.");
        if (t.status.equals("PENDING") && cfg.dev("notification-pending-not-found"))
            throw err(404, cfg.spec() ? "NOT_FOUND" : "RESOURCE_NOT_FOUND", "No completed request to pay of yours has this reference id.");
        if (t.status.equals("PENDING")) throw err(409, "TRANSACTION_NOT_COMPLETED", "The payment is not completed yet.");
        if (t.status.equals("FAILED"))
            throw err(409, cfg.spec() ? "PAYMENT_NOT_APPROVED" : "TRANSACTION_NOT_COMPLETED", "The payment did not complete successfully.");
        if (!t.status.equals("SUCCESSFUL")) throw err(409, "TRANSACTION_NOT_COMPLETED", "The payment is not a successfully completed one.");
        if (cfg.dev("notification-needs-status-read") && !t.statusRead) throw err(409, "TRANSACTION_NOT_COMPLETED", "The payment is not settled yet.");
        long now = System.currentTimeMillis();
        long window = cfg.on("notification-window-short") ? 5_000 : cfg.spec() ? 1_800_000 : 3_600_000;
        if (now > t.completedAt + window) throw err(410, "EXPIRED", "The delivery-notification opportunity has expired.");
        if (t.lastNotification >= 0 && now - t.lastNotification < cool) {
            Fail f = err(429, cfg.spec() ? "RESOURCE_ALREADY_EXIST" : "NOT_ALLOWED", "A notification for this payment was sent a moment ago.");
            if (cfg.on("retry-after-on-429")) f.r.header("Retry-After", Long.toString((cool - (now - t.lastNotification) + 999) / 1000));
            if (cfg.dev("notification-third-attempt-accepted")) t.lastNotification = -1;
            throw f;
        }
        t.lastNotification = now;
        if (cfg.dev("notification-sent-to-callback-url") && t.callbackUrl != null)
            sendCallback(t.callbackUrl, "POST", Json.write(Json.obj("notificationMessage", m)), t.ownerId);
        if (cfg.dev("notification-purges-payment")) txns.remove(t.key);
        return empty(200);
    }

    // ---------------------------------------------------------------- balances and account holders
    Resp balance(Ctx c) {
        ApiUser u = caller(c, false);
        envPresent(c, true);
        String cur = cfg.currency;
        if (c.seg.size() == 5) {
            cur = c.seg.get(4);
            if (!cur.matches(cfg.spec() ? "[A-Z]{3}" : "[A-Za-z]{3}")) throw bad("the currency must be an ISO 4217 code");
        }
        if (cfg.dev("disbursement-balance-environment-400") && c.product.equals("disbursement")) {
            String e = c.h("X-Target-Environment");
            if (!e.equals(cfg.targetEnvironment)) throw bad("unknown X-Target-Environment '" + e + "'");
        }
        if (cfg.dev("remittance-env-error-gateway-shape") && c.product.equals("remittance")) {
            String e = c.h("X-Target-Environment");
            if (!e.equals(cfg.targetEnvironment))
                throw new Fail(json(500, Json.obj("statusCode", 500, "message", "Access to target environment '" + e + "' is not allowed.")));
        }
        envValue(c);
        if (!cur.equals(cfg.currency)) throw err(500, "INVALID_CURRENCY", "The currency " + cur + " is not taken here.");
        String value = balance(u.id, c.product).stripTrailingZeros().toPlainString();
        if (cfg.dev("currency-balance-never-updated") && c.seg.size() == 5) value = c.product.equals("disbursement") ? "1000000" : "0";
        if (cfg.dev("balance-cached")) {
            String ck = u.id + "/" + c.product + "/" + cur;
            Object[] hit = balanceCache.get(ck);
            long now = System.currentTimeMillis();
            if (hit != null && now - (Long) hit[1] < 30_000) value = (String) hit[0];
            else balanceCache.put(ck, new Object[]{value, now});
        }
        return json(200, Json.obj("availableBalance", value, "currency", cur));
    }

    Resp active(Ctx c) {
        ApiUser u;
        if (cfg.dev("disbursement-holder-wants-collection-token") && c.product.equals("disbursement")) {
            c.product = "collection";
            try { u = caller(c, false); } finally { c.product = "disbursement"; }
        } else u = caller(c, false);
        if (!cfg.dev("holder-answer-cached-per-user")) return activeAnswer(c);
        // the cache key leaves out the holder
        String ck = u.id + "/" + c.product;
        long now = System.currentTimeMillis();
        Object[] hit = holderCache.get(ck);
        if (hit != null && now - (Long) hit[1] < 10_000) {
            if (hit[0] instanceof Fail) throw (Fail) hit[0];
            return (Resp) hit[0];
        }
        try {
            Resp r = activeAnswer(c);
            holderCache.put(ck, new Object[]{r, now});
            return r;
        } catch (Fail f) {
            if (f.r.status != 400) holderCache.put(ck, new Object[]{f, now});
            throw f;
        }
    }

    Resp activeAnswer(Ctx c) {
        String type = c.seg.get(3), id = c.seg.get(4);
        switch (type) {
            case "msisdn": partyIdCheck("MSISDN", id); break;
            case "email":
                if (cfg.dev("collection-holder-email-refused") && c.product.equals("collection")) throw bad("accountHolderIdType email is not supported");
                partyIdCheck("EMAIL", id); break;
            case "party_code": partyIdCheck("PARTY_CODE", id); break;
            default: throw bad("accountHolderIdType must be msisdn, email or party_code (lower case)");
        }
        envPresent(c, true);
        envValue(c);
        String d = type.equals("msisdn") ? id.replace("+", "") : "";
        if (cfg.spec() && cfg.dev("holder-not-found-404") && d.equals("46733123450"))
            throw err(404, "RESOURCE_NOT_FOUND", "Account holder not found.");
        if (cfg.spec()) return json(200, Json.obj("active", !(d.equals("46733123450") || d.equals("46733123451"))));
        switch (d) {
            case "46733123450": throw err(404, "RESOURCE_NOT_FOUND", "Account holder not found.");
            case "46733123452": throw err(500, "NOT_ALLOWED", "Not allowed.");
            case "46733123453": throw err(500, "NOT_ALLOWED_TARGET_ENVIRONMENT", "Access to target environment is not allowed.");
            case "46733123454": throw err(500, "INTERNAL_PROCESSING_ERROR", "An internal error occurred.");
            case "46733123455": throw err(503, "SERVICE_UNAVAILABLE", "Service unavailable.");
            default: return json(200, Json.obj(cfg.dev("disbursement-holder-result-renamed") && c.product.equals("disbursement") ? "active" : "result", true));
        }
    }

    Resp basicUserInfo(Ctx c) {
        caller(c, false);
        msisdnCheck(c.seg.get(4));
        envPresent(c, true);
        envValue(c);
        if (cfg.spec())
            return json(200, Json.obj("given_name", "Sand Anna", "family_name", "Box", "birthdate", "1976-08-13",
                "locale", "sv-SE", "gender", "female", "status", cfg.dev("basic-info-status-boolean") ? (Object) Boolean.TRUE : "ACTIVE"));
        return json(200, Json.obj("sub", "0", "name", "Sand Box", "given_name", "Sand", "family_name", "Box",
            "birthdate", "1976-08-13", "locale", "sv_SE", "gender", "MALE", "updated_at", 1678355127));
    }

    // ---------------------------------------------------------------- consent (CIBA)
    static final List<String> SCOPES_SPEC = List.of("openid", "profile", "email", "phone", "address", "all_info");
    static final List<String> SCOPES_MTN = List.of("openid", "profile", "all_info");

    Resp bcAuthorize(Ctx c) {
        ApiUser u = caller(c, cfg.dev("bc-authorize-accepts-basic"));
        envPresent(c, true);
        Map<String, String> f = formBody(c);
        String hint = f.get("login_hint");
        if (hint == null || hint.isEmpty()) throw bad("login_hint is required");
        Matcher m = Pattern.compile(cfg.spec() && !cfg.on("login-hint-msisdn-only") ? "ID:(.+)/(MSISDN|EMAIL)" : "ID:(.+)/(MSISDN)").matcher(hint);
        if (!m.matches()) throw bad("login_hint must be ID:<msisdn>/MSISDN");
        partyIdCheck(m.group(2), m.group(1));
        String scope = f.get("scope");
        if (scope == null || scope.trim().isEmpty()) throw err(400, "MISSING_SCOPE_INSTRUCTION", "A scope is required.");
        List<String> scopes = new ArrayList<>();
        for (String s : scope.trim().split(" +")) {
            if (!(cfg.spec() ? SCOPES_SPEC : SCOPES_MTN).contains(s)) throw err(400, "UNSUPPORTED_SCOPE", "The scope '" + s + "' is not offered.");
            if (!scopes.contains(s)) scopes.add(s);
        }
        if (cfg.mtn() && cfg.dev("scope-requires-openid") && !scopes.contains("openid"))
            throw err(400, "MISSING_SCOPE_INSTRUCTION", "The scope must include openid.");
        String at = f.getOrDefault("access_type", "online");
        if (!at.equals("online") && !at.equals("offline")) throw bad("access_type must be online or offline");
        long validity = cfg.on("consent-validity-30-days") ? 2592000 : at.equals("offline") || cfg.mtn() ? 86400 : 3600;
        String cvi = f.get("consent_valid_in");
        if (cvi != null && cfg.dev("consent-valid-in-refused")) throw bad("unknown parameter consent_valid_in");
        if (cvi != null) {
            if (!cvi.matches("[0-9]{1,9}") || Long.parseLong(cvi) < 1 || Long.parseLong(cvi) > 31536000)
                throw bad("consent_valid_in must be a whole number of seconds from 1 to 31536000");
            validity = Long.parseLong(cvi);
        }
        envValue(c);
        String cb = callbackUrl(c, u, !cfg.dev("consent-callback-host-not-checked"));
        long now = System.currentTimeMillis();
        AuthReq r = new AuthReq();
        r.id = cfg.dev("auth-req-id-from-clock")
            ? UUID.nameUUIDFromBytes((u.id + "|" + now / 1000).getBytes(StandardCharsets.UTF_8)).toString()
            : UUID.randomUUID().toString();
        r.userId = u.id; r.hint = m.group(1); r.hintType = m.group(2);
        r.scopes = scopes; r.accessType = at; r.validity = validity; r.created = now; r.callbackUrl = cb;
        r.interval = cfg.spec() ? 3 : 4;
        r.expiresAt = now + (cfg.on("consent-request-short-lived") ? 60_000 : cfg.spec() ? 180_000 : 240_000);
        r.decideAt = now + (cfg.on("consent-approved-slowly") ? 10_000 : cfg.spec() ? 4_000 : 3_000);
        String d = r.hint.replace("+", "");
        r.decision = d.equals("46733123451") ? "deny" : d.equals("46733123452") ? "never" : "approve";
        authReqs.put(r.id, r);
        if (cb != null && !r.decision.equals("never") && cfg.dev("consent-ping-before-decision"))
            sendCallback(cb, "POST", Json.write(Json.obj("auth_req_id", r.id)), r.userId);
        else if (cb != null && !r.decision.equals("never"))
            sched.schedule(() -> { synchronized (lock) { consentCallback(r); } }, r.decideAt - now, TimeUnit.MILLISECONDS);
        return json(200, Json.obj("auth_req_id", r.id, "interval", r.interval, "expires_in", (r.expiresAt - now) / 1000));
    }

    void consentCallback(AuthReq r) {
        Map<String, Object> body = Json.obj("auth_req_id", r.id);
        if (r.decision.equals("deny")) body.put("error", "access_denied");
        else if (cfg.on("consent-push")) { r.pushed = issueConsent(r); body.putAll(r.pushed); }
        sendCallback(r.callbackUrl, "POST", Json.write(body), r.userId);
    }

    Map<String, Object> issueConsent(AuthReq r) { return issueConsent(r, null); }
    Map<String, Object> issueConsent(AuthReq r, String viaRefresh) {
        long now = System.currentTimeMillis();
        if (r.consentEnd == 0) r.consentEnd = r.decideAt + r.validity * 1000;
        long life = Math.max(1, Math.min(3600, (r.consentEnd - now) / 1000));
        Token t = new Token();
        t.jti = UUID.randomUUID().toString(); t.kind = "consent"; t.userId = r.userId; t.product = "collection";
        t.exp = now + life * 1000; t.req = r; t.viaRefresh = viaRefresh;
        tokens.put(t.jti, t);
        lastConsentToken = t;
        r.tokens.add(t.jti);
        List<String> shown = new ArrayList<>(r.scopes);
        if (cfg.on("consent-scope-reordered")) Collections.sort(shown);
        String scope = String.join(" ", shown);
        String at = jwt.sign(Json.obj("iss", "momo-blind-java", "sub", subject(r), "azp", r.userId, "aud", "userinfo",
            "scope", scope, "iat", now / 1000, "exp", t.exp / 1000, "jti", t.jti));
        String rfToken;
        if (viaRefresh != null && cfg.on("refresh-token-kept")) rfToken = viaRefresh;
        else {
            Refresh rf = new Refresh();
            rf.token = UUID.randomUUID().toString(); rf.req = r; rf.exp = r.consentEnd;
            if (!(viaRefresh != null && cfg.dev("refreshed-refresh-token-unknown"))) refreshes.put(rf.token, rf);
            r.refreshes.add(rf.token);
            rfToken = rf.token;
        }
        return Json.obj("access_token", at, "token_type", "Bearer", "expires_in", life, "scope", scope,
            "refresh_token", rfToken, "refresh_token_expired_in", Math.max(0, (r.consentEnd - now) / 1000));
    }

    String subject(AuthReq r) {
        if (cfg.mtn()) return "0";
        try {
            String basis = cfg.dev("userinfo-sub-per-client") ? r.userId : r.hint + "|" + r.userId;
            byte[] h = MessageDigest.getInstance("SHA-256").digest(basis.getBytes(StandardCharsets.UTF_8));
            StringBuilder b = new StringBuilder();
            for (int i = 0; i < 16; i++) b.append(String.format("%02x", h[i]));
            return b.toString();
        } catch (Exception e) { throw new IllegalStateException(e); }
    }

    Resp oauthToken(Ctx c) {
        ApiUser u = userByCreds(basicCreds(c));
        // deviation refresh-grant-unauthenticated: a request without Authorization passes on to the grant
        boolean anonymous = u == null && cfg.dev("refresh-grant-unauthenticated") && c.h("Authorization") == null;
        if (u == null && !anonymous) throw oauth(401, "invalid_client");
        String env = c.h("X-Target-Environment");
        if (cfg.spec() && (env == null || env.isEmpty())) throw oauth(400, "invalid_request");
        Map<String, String> f;
        try { f = formBody(c); } catch (Fail e) { throw oauth(400, "invalid_request"); }
        envValue(c);
        String gt = f.get("grant_type");
        if (gt == null || gt.isEmpty()) throw oauth(400, "invalid_request");
        if (anonymous && !gt.equals("refresh_token")) throw oauth(401, "invalid_client");
        long now = System.currentTimeMillis();
        Map<String, Object> out;
        if (gt.equals("urn:openid:params:grant-type:ciba")) {
            String id = f.get("auth_req_id");
            if (id == null || id.isEmpty()) throw oauth(400, "invalid_request");
            AuthReq r = authReqs.get(id);
            if (r == null) throw oauth(400, "invalid_grant");
            if (cfg.on("consent-bound-to-client") && !r.userId.equals(u.id)) throw oauth(400, "invalid_grant");
            if (r.redeemed) {
                if (cfg.spec()) revokeConsent(r);
                throw oauth(400, "invalid_grant");
            }
            if (now >= r.expiresAt || (cfg.dev("auth-req-id-expires-early") && now >= r.created + 10_000)) throw oauth(400, "expired_token");
            boolean slowDev = cfg.dev("slow-down-at-interval");
            if (slowDev) {
                boolean early = r.lastPoll >= 0 && now - r.lastPoll < r.interval * 1000L + 2000;
                r.lastPoll = now;
                if (early) throw oauth(400, "slow_down");
            }
            if (now >= r.decideAt && r.decision.equals("deny")) throw oauth(400, "access_denied");
            if (now < r.decideAt || r.decision.equals("never")) {
                boolean fast = !slowDev && cfg.spec() && r.lastPoll >= 0 && now - r.lastPoll < r.interval * 1000L - 250;
                r.lastPoll = now;
                if (fast) { r.interval += 5; throw oauth(400, "slow_down"); }
                throw oauth(400, "authorization_pending");
            }
            r.redeemed = true;
            Object[] cached = cfg.dev("consent-token-cached-per-client") ? consentCache.get(u.id) : null;
            if (r.pushed != null) out = r.pushed;
            else if (cached != null && now < ((Token) cached[1]).exp && !((Token) cached[1]).revoked) {
                @SuppressWarnings("unchecked") Map<String, Object> again = (Map<String, Object>) cached[0];
                out = again;
            } else {
                out = issueConsent(r);
                if (cfg.dev("consent-token-cached-per-client")) consentCache.put(u.id, new Object[]{out, lastConsentToken});
            }
        } else if (gt.equals("refresh_token")) {
            String rt = f.get("refresh_token");
            if (rt == null || rt.isEmpty()) throw oauth(400, "invalid_request");
            String ari = f.get("auth_req_id");
            if (cfg.dev("refresh-grant-requires-auth-req-id") && (ari == null || ari.isEmpty())) throw oauth(400, "invalid_request");
            Refresh rf = refreshes.get(rt);
            if (rf == null || rf.revoked || now >= rf.exp) throw oauth(400, "invalid_grant");
            if (cfg.on("consent-bound-to-client") && u != null && !rf.req.userId.equals(u.id)) throw oauth(400, "invalid_grant");
            if (cfg.on("refresh-token-rotates")) rf.revoked = true;
            out = issueConsent(rf.req, rf.token);
        } else throw oauth(400, "unsupported_grant_type");
        if (gt.equals("refresh_token") && cfg.dev("refresh-grant-cacheable")) return json(200, out);
        return json(200, out).header("Cache-Control", "no-store");
    }

    void revokeConsent(AuthReq r) {
        for (String j : r.tokens) { Token t = tokens.get(j); if (t != null) t.revoked = true; }
        for (String k : r.refreshes) { Refresh rf = refreshes.get(k); if (rf != null) rf.revoked = true; }
    }

    static final List<String> PROFILE_CLAIMS = List.of("name", "given_name", "family_name", "middle_name", "gender", "birthdate", "locale", "updated_at");

    Resp userinfo(Ctx c) {
        Resp r = userinfoRecord(c);
        if (!cfg.dev("userinfo-booleans-as-strings")) return r;
        Map<String, Object> m;
        try {
            @SuppressWarnings("unchecked")
            Map<String, Object> parsed = (Map<String, Object>) Json.parse(new String(r.body, StandardCharsets.UTF_8));
            m = parsed;
        } catch (Json.ParseException e) { throw new IllegalStateException(e); }
        for (Map.Entry<String, Object> e : m.entrySet()) if (e.getValue() instanceof Boolean) e.setValue(e.getValue().toString());
        return json(r.status, m);
    }

    Resp userinfoRecord(Ctx c) {
        String a = c.h("Authorization");
        if (a == null || !a.regionMatches(true, 0, "Bearer ", 0, 7)) throw oauth(401, "consent_token_missing");
        Token t = tokenOf(a.substring(7).trim());
        if (t == null) throw oauth(401, "consent_token_not_valid");
        if (!t.kind.equals("consent")) throw oauth(401, "consent_required");
        if (t.revoked) throw oauth(401, "consent_token_revoked");
        if (System.currentTimeMillis() >= t.exp) throw oauth(401, "consent_token_expired");
        envPresent(c, true);
        envValue(c);
        AuthReq r = t.req;
        String sub = cfg.dev("userinfo-sub-changes-after-refresh") && t.viaRefresh != null ? t.viaRefresh : subject(r);
        boolean msisdn = r.hintType.equals("MSISDN");
        String phone = msisdn ? "+" + r.hint.replace("+", "") : null;
        Map<String, Object> full;
        if (cfg.spec()) {
            full = Json.obj("sub", sub, "name", "Sand Anna Lee Box", "given_name", "Sand Anna", "family_name", "Box",
                "middle_name", "Lee", "email", msisdn ? "sand.box@example.com" : r.hint, "email_verified", true,
                "gender", "female", "locale", "sv-SE", "phone_number", phone, "phone_number_verified", msisdn,
                "address", "Box 1, 111 22 Stockholm, SE", "updated_at", 1678355127, "status", "ACTIVE",
                "birthdate", "1976-08-13", "credit_score", "680", "active", true, "country_of_birth", "SE",
                "region_of_birth", "Stockholm", "city_of_birth", "Stockholm", "occupation", "Engineer",
                "employer_name", "Sandbox AB", "identification_type", "PASSPORT", "identification_value", "SE1234567");
            if (cfg.dev("userinfo-updated-at-iso-string")) full.put("updated_at", "2023-03-09T09:45:27Z");
            if (r.scopes.contains("all_info") || cfg.on("userinfo-all-claims")) return json(200, full);
            Map<String, Object> out = Json.obj("sub", full.get("sub"));
            for (String k : full.keySet()) {
                boolean want = (r.scopes.contains("profile") && PROFILE_CLAIMS.contains(k))
                    || (r.scopes.contains("email") && (k.equals("email") || k.equals("email_verified")))
                    || (r.scopes.contains("phone") && (k.equals("phone_number") || k.equals("phone_number_verified")))
                    || (r.scopes.contains("address") && k.equals("address"));
                if (want) out.put(k, full.get(k));
            }
            return json(200, out);
        }
        full = Json.obj("sub", sub, "name", "Sand Box", "given_name", "Sand", "family_name", "Box", "middle_name", "",
            "email", "sand.box@sandbox.momo", "email_verified", true, "gender", "male", "locale", "sv_SE",
            "phone_number", phone == null ? "" : phone.substring(1), "phone_number_verified", msisdn, "address", "",
            "updated_at", 1678355127, "status", "ACTIVE", "birthdate", "1976-08-13", "credit_score", "",
            "active", true, "country_of_birth", "", "region_of_birth", "", "city_of_birth", "", "occupation", "",
            "employer_name", "", "identification_type", "", "identification_value", "");
        if (cfg.dev("userinfo-updated-at-iso-string")) full.put("updated_at", "2023-03-09T09:45:27Z");
        return json(200, full);
    }

    // ---------------------------------------------------------------- callbacks
    void sendCallback(String url, String method, String body, String userId) {
        if (cfg.dev("callback-port-dropped")) {
            try {
                URI u = new URI(url);
                url = u.getScheme() + "://" + (u.getRawUserInfo() == null ? "" : u.getRawUserInfo() + "@") + u.getHost()
                    + (u.getRawPath() == null ? "" : u.getRawPath()) + (u.getRawQuery() == null ? "" : "?" + u.getRawQuery());
            } catch (Exception ignored) { /* validated at creation */ }
        }
        long[] delays = cfg.on("callback-single-attempt") ? new long[]{0} : cfg.spec() ? new long[]{0, 250, 1000, 4000, 15000} : new long[]{0, 1000, 10000};
        String sig = null;
        if (cfg.on("callback-signature")) {
            ApiUser u = users.get(userId);
            String key = u == null || u.keys.isEmpty() ? "" : u.keys.get(u.keys.size() - 1);
            sig = "sha256=" + hmac(key, body);
        }
        attempt(url, method, body, sig, delays, 0);
    }

    void attempt(String url, String method, String body, String sig, long[] delays, int i) {
        Runnable r = () -> cbPool.execute(() -> {
            boolean ok = false;
            try {
                String sent = i > 0 && cfg.mtn() && cfg.dev("callback-retry-without-body") ? "" : body;
                HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(2))
                    .header("Content-Type", JSON_TYPE)
                    .method(method, HttpRequest.BodyPublishers.ofString(sent, StandardCharsets.UTF_8));
                if (sig != null) b.header("X-Callback-Signature", sig);
                HttpResponse<Void> resp = http.send(b.build(), HttpResponse.BodyHandlers.discarding());
                ok = resp.statusCode() >= 200 && resp.statusCode() < 300;
            } catch (Exception e) { ok = false; }
            if (!ok && i + 1 < delays.length) attempt(url, method, body, sig, delays, i + 1);
        });
        if (delays[i] == 0) r.run();
        else sched.schedule(r, delays[i], TimeUnit.MILLISECONDS);
    }

    static String hmac(String key, String body) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key.isEmpty() ? new byte[1] : key.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
            byte[] h = mac.doFinal(body.getBytes(StandardCharsets.UTF_8));
            StringBuilder b = new StringBuilder();
            for (byte x : h) b.append(String.format("%02x", x));
            return b.toString();
        } catch (Exception e) { throw new IllegalStateException(e); }
    }

    // ---------------------------------------------------------------- small helpers
    String hex(int bytes) {
        byte[] b = new byte[bytes];
        rnd.nextBytes(b);
        StringBuilder s = new StringBuilder();
        for (byte x : b) s.append(String.format("%02x", x));
        return s.toString();
    }
    String digits(int n) {
        StringBuilder s = new StringBuilder();
        s.append((char) ('1' + rnd.nextInt(9)));
        while (s.length() < n) s.append((char) ('0' + rnd.nextInt(10)));
        return s.toString();
    }
}
