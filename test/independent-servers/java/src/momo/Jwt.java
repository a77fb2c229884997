package momo;

import java.nio.charset.StandardCharsets;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.Signature;
import java.util.Base64;
import java.util.Map;

/** RS256 JSON Web Tokens (RFC 7519 / RFC 7515), key pair made at start-up. */
public final class Jwt {
    private final KeyPair keys;
    private static final Base64.Encoder ENC = Base64.getUrlEncoder().withoutPadding();
    private static final Base64.Decoder DEC = Base64.getUrlDecoder();

    public Jwt() {
        try {
            KeyPairGenerator g = KeyPairGenerator.getInstance("RSA");
            g.initialize(2048);
            keys = g.generateKeyPair();
        } catch (Exception e) { throw new IllegalStateException(e); }
    }

    public String sign(Map<String, Object> claims) {
        String h = ENC.encodeToString(Json.write(Json.obj("alg", "RS256", "typ", "JWT")).getBytes(StandardCharsets.UTF_8));
        String p = ENC.encodeToString(Json.write(claims).getBytes(StandardCharsets.UTF_8));
        try {
            Signature s = Signature.getInstance("SHA256withRSA");
            s.initSign(keys.getPrivate());
            s.update((h + "." + p).getBytes(StandardCharsets.US_ASCII));
            return h + "." + p + "." + ENC.encodeToString(s.sign());
        } catch (Exception e) { throw new IllegalStateException(e); }
    }

    /** The claims of a token whose signature is right, else null. */
    @SuppressWarnings("unchecked")
    public Map<String, Object> verify(String token) {
        if (token == null || token.length() > 8192) return null;
        String[] parts = token.split("\\.", -1);
        if (parts.length != 3) return null;
        try {
            Object header = Json.parse(new String(DEC.decode(parts[0]), StandardCharsets.UTF_8));
            if (!(header instanceof Map) || !"RS256".equals(((Map<String, Object>) header).get("alg"))) return null;
            Signature s = Signature.getInstance("SHA256withRSA");
            s.initVerify(keys.getPublic());
            s.update((parts[0] + "." + parts[1]).getBytes(StandardCharsets.US_ASCII));
            if (!s.verify(DEC.decode(parts[2]))) return null;
            Object claims = Json.parse(new String(DEC.decode(parts[1]), StandardCharsets.UTF_8));
            return claims instanceof Map ? (Map<String, Object>) claims : null;
        } catch (Exception e) { return null; }
    }
}
