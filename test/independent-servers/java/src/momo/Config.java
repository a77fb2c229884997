package momo;

import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;

/** Command-line contract of the server. */
public final class Config {
    public enum Profile { SPEC, MTN }

    public int port = 0;
    public Profile profile = Profile.SPEC;
    public final Map<String, String> keys = new LinkedHashMap<>();
    public String targetEnvironment = "sandbox";
    public String currency = "EUR";
    public long tokenLifetime = 3600;
    public double delayedApprovalSeconds = 25;
    public double pendingTimeoutSeconds = 120;
    public final Set<String> controls = new LinkedHashSet<>();
    public boolean listControls = false;

    public static final String[] PRODUCTS = {"collection", "disbursement", "remittance"};

    /** A spec-legal alternative behaviour. */
    public static final class Control {
        public final String name, profiles, clause, effect;
        public final boolean mtnLegal;
        Control(String name, boolean mtnLegal, String clause, String effect) {
            this.name = name; this.mtnLegal = mtnLegal; this.profiles = mtnLegal ? "spec,mtn-sandbox" : "spec";
            this.clause = clause; this.effect = effect;
        }
    }

    public static final Map<String, Control> CONTROLS = new LinkedHashMap<>();
    static {
        add(new Control("single-live-token", true,
            "spec 2.6/5.3 give a lifetime (expires_in) but no rule against revoking a token sooner; RFC 6749 1.4",
            "issuing an access token revokes the API user's earlier access tokens of that product (they get 401)"));
        add(new Control("notification-window-short", true,
            "spec 8 'Duration of the delivery-notification window: not shown'; 4.2 #3 410",
            "the delivery-notification opportunity ends 5 s after the payment completes (then 410 EXPIRED)"));
        add(new Control("refund-capped", true,
            "spec 4.3 #9 and 2.4 set no rule on refund amounts; 7 set B has NOT_ALLOWED",
            "refunds whose running total would exceed the refunded payment end FAILED, reason NOT_ALLOWED"));
        add(new Control("shared-reference-ids", true,
            "spec 2.5 / 7 rule 1 'reuses an existing reference ID' without naming the namespace",
            "one reference-id namespace over requests to pay, refunds and deposits (cross-kind reuse gives 409)"));
        add(new Control("consent-push", true,
            "spec 6 callback 'payload ... not shown'; OpenID CIBA Core 10.3 (push mode)",
            "the bc-authorize callback carries the consent token record (push) instead of only auth_req_id (ping)"));
        add(new Control("callback-signature", true,
            "spec 6 'signing ... not shown'; notes: retry/signing not recorded",
            "each callback carries X-Callback-Signature: sha256=<HMAC-SHA256 of the body keyed with the API user's newest API key>"));
        add(new Control("slow-disbursements", false,
            "spec 3 'Transitions: not shown'; 8 timings not shown (mtn notes: ordinary payees succeed at once, so spec only)",
            "deposits and refunds stay PENDING 6 s before their outcome"));
        add(new Control("connection-close", true,
            "RFC 9112 9.6 / RFC 9110 7.6.1: a server may close the connection after any response; the spec says nothing of persistence",
            "every response carries Connection: close and the connection is closed after it"));
        add(new Control("api-key-rotates", true,
            "spec 4.5 #15 'Create an API key' says nothing of earlier keys (in mtn-sandbox this is already the default)",
            "a new API key invalidates the API user's earlier keys (token requests with them are refused)"));
        add(new Control("status-needs-target-env", true,
            "spec 4.6 status-query 'headers ... not shown'",
            "status queries without X-Target-Environment are refused with 400"));
        add(new Control("consent-bound-to-client", true,
            "spec 4.3 #11 silent on who may redeem an auth_req_id; OpenID CIBA Core 10.1 (the requesting client)",
            "only the API user that called bc-authorize may redeem its auth_req_id; any other gets 400 invalid_grant"));
    }
    private static void add(Control c) { CONTROLS.put(c.name, c); }

    public static final class BadOption extends Exception {
        public BadOption(String m) { super(m); }
    }

    public boolean on(String control) { return controls.contains(control); }
    public boolean spec() { return profile == Profile.SPEC; }
    public boolean mtn() { return profile == Profile.MTN; }
    public String profileName() { return spec() ? "spec" : "mtn-sandbox"; }

    public static Config parse(String[] args) throws BadOption {
        Config c = new Config();
        c.keys.put("collection", "collection-key");
        c.keys.put("disbursement", "disbursement-key");
        c.keys.put("remittance", "remittance-key");
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            String val = null;
            int eq = a.indexOf('=');
            if (a.startsWith("--") && eq > 0) { val = a.substring(eq + 1); a = a.substring(0, eq); }
            if (a.equals("--list-controls")) {
                if (val != null) throw new BadOption("--list-controls takes no value");
                c.listControls = true;
                continue;
            }
            if (!a.equals("--port") && !a.equals("--profile") && !a.equals("--keys") && !a.equals("--target-environment")
                && !a.equals("--currency") && !a.equals("--token-lifetime") && !a.equals("--delayed-approval-seconds")
                && !a.equals("--pending-timeout-seconds") && !a.equals("--control"))
                throw new BadOption("unknown option '" + a + "' (options: --port, --profile, --keys, --target-environment, --currency, --token-lifetime, --delayed-approval-seconds, --pending-timeout-seconds, --control, --list-controls)");
            if (val == null) {
                if (i + 1 >= args.length) throw new BadOption(a + " needs a value");
                val = args[++i];
            }
            switch (a) {
                case "--port": {
                    int p;
                    try { p = Integer.parseInt(val); } catch (NumberFormatException e) { throw new BadOption("--port must be an integer 0-65535, got '" + val + "'"); }
                    if (p < 0 || p > 65535) throw new BadOption("--port must be an integer 0-65535, got '" + val + "'");
                    c.port = p; break;
                }
                case "--profile":
                    if (val.equals("spec")) c.profile = Profile.SPEC;
                    else if (val.equals("mtn-sandbox")) c.profile = Profile.MTN;
                    else throw new BadOption("--profile must be 'spec' or 'mtn-sandbox', got '" + val + "'");
                    break;
                case "--keys":
                    if (val.isEmpty()) throw new BadOption("--keys must look like collection=K1,disbursement=K2,remittance=K3");
                    for (String part : val.split(",", -1)) {
                        int e = part.indexOf('=');
                        if (e <= 0) throw new BadOption("--keys entry '" + part + "' must be product=key (collection=K1,disbursement=K2,remittance=K3)");
                        String prod = part.substring(0, e).trim(), key = part.substring(e + 1);
                        if (!c.keys.containsKey(prod)) throw new BadOption("--keys: unknown product '" + prod + "' (use collection, disbursement, remittance)");
                        if (key.isEmpty() || !key.chars().allMatch(ch -> ch > 0x20 && ch < 0x7f)) throw new BadOption("--keys: key for " + prod + " must be non-empty visible ASCII");
                        c.keys.put(prod, key);
                    }
                    break;
                case "--target-environment":
                    if (!val.matches("[A-Za-z0-9._-]{1,64}")) throw new BadOption("--target-environment must be 1-64 letters, digits, '.', '_' or '-', got '" + val + "'");
                    c.targetEnvironment = val; break;
                case "--currency":
                    if (!val.matches("[A-Z]{3}")) throw new BadOption("--currency must be an ISO 4217 code of three upper-case letters, got '" + val + "'");
                    c.currency = val; break;
                case "--token-lifetime": {
                    long t;
                    try { t = Long.parseLong(val); } catch (NumberFormatException e) { throw new BadOption("--token-lifetime must be a whole number of seconds >= 1, got '" + val + "'"); }
                    if (t < 1 || t > 315360000L) throw new BadOption("--token-lifetime must be a whole number of seconds >= 1, got '" + val + "'");
                    c.tokenLifetime = t; break;
                }
                case "--delayed-approval-seconds":
                    c.delayedApprovalSeconds = seconds(a, val, true); break;
                case "--pending-timeout-seconds":
                    c.pendingTimeoutSeconds = seconds(a, val, false); break;
                case "--control":
                    for (String n : val.split(",", -1)) {
                        n = n.trim();
                        if (!CONTROLS.containsKey(n)) throw new BadOption("--control: unknown control '" + n + "' (see --list-controls)");
                        c.controls.add(n);
                    }
                    break;
                default: throw new BadOption("unknown option '" + a + "'");
            }
        }
        if (new LinkedHashSet<>(c.keys.values()).size() != c.keys.size())
            throw new BadOption("--keys: each product needs its own key (two products share one)");
        if (!c.listControls && c.mtn())
            for (String n : c.controls)
                if (!CONTROLS.get(n).mtnLegal) throw new BadOption("--control " + n + " is legal only with --profile spec");
        return c;
    }

    private static double seconds(String opt, String val, boolean zeroOk) throws BadOption {
        double d;
        try { d = Double.parseDouble(val); } catch (NumberFormatException e) { d = Double.NaN; }
        if (Double.isNaN(d) || Double.isInfinite(d) || d < 0 || (!zeroOk && d == 0) || d > 86400 * 30 || !val.matches("[0-9]+(\\.[0-9]+)?"))
            throw new BadOption(opt + " must be a number of seconds " + (zeroOk ? ">= 0" : "> 0") + ", got '" + val + "'");
        return d;
    }

    public String productOfKey(String key) {
        if (key == null) return null;
        for (Map.Entry<String, String> e : keys.entrySet()) if (e.getValue().equals(key)) return e.getKey();
        return null;
    }
}
