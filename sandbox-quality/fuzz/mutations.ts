import fc from 'fast-check';
import { createSigner } from 'fast-jwt';
import type { ModelOperation } from './openapi-model.ts';
import type { RequestParts } from './requests.ts';
import type { EpisodeWorld } from './episode.ts';

/**
 * The ways a request is made malformed. Each is plain data (fast-check prints and shrinks it) and is
 * applied to a valid request once the episode has filled in its credentials and ids, so each breaks one
 * thing and keeps the rest valid.
 */
export type Mutation =
  | { kind: 'no-subscription-key' }
  | { kind: 'unknown-subscription-key'; value: string }
  | { kind: 'other-product-key'; pick: number }
  | { kind: 'no-credential' }
  | { kind: 'garbage-authorization'; value: string }
  | { kind: 'forged-token'; variant: ForgedToken; value: string }
  | { kind: 'other-product-credential'; pick: number }
  | { kind: 'wrong-token-kind' }
  | { kind: 'bad-basic'; variant: BadBasic; value: string }
  | { kind: 'missing-header'; pick: number }
  | { kind: 'malformed-header'; pick: number; value: string }
  | { kind: 'extra-headers'; headers: [string, string][] }
  | { kind: 'missing-field'; pick: number }
  | { kind: 'extra-field'; name: string; value: unknown }
  | { kind: 'mistyped-field'; pick: number; value: unknown }
  | { kind: 'wrong-format'; pick: number; value: string }
  | { kind: 'huge-string'; pick: number; length: number; unit: string }
  | { kind: 'unicode-string'; pick: number; value: string }
  | { kind: 'prototype-pollution'; variant: 'proto-top' | 'proto-nested' | 'constructor-prototype' }
  | { kind: 'garbage-body'; value: string | Uint8Array }
  | { kind: 'empty-body'; withContentType: boolean }
  | { kind: 'no-body' }
  | { kind: 'wrong-content-type'; value: string }
  | { kind: 'deep-nesting'; pick: number; depth: number }
  | { kind: 'duplicate-key'; pick: number; value: unknown }
  | { kind: 'body-on-bodyless'; value: string; contentType: string | null }
  | { kind: 'bad-path-param'; pick: number; value: string; raw: boolean }
  | { kind: 'wrong-method'; method: string }
  | { kind: 'path-case' }
  | { kind: 'path-junk'; suffix: string }
  | { kind: 'query-junk'; query: string };

export type MutationKind = Mutation['kind'];

type ForgedToken =
  | 'alg-none'
  | 'other-secret'
  | 'bad-signature'
  | 'expired'
  | 'unknown-user'
  | 'other-product'
  | 'wrong-use'
  | 'missing-claims'
  | 'random'
  | 'not-a-jwt';
type BadBasic = 'unknown-user' | 'wrong-key' | 'no-colon' | 'not-base64' | 'empty' | 'upper-case-id' | 'huge' | 'other-text';

/** Mutations that send the request to a path or method no operation serves: the framework's 404 (or 400, 405, 414) answers them. */
export const ROUTE_MISSES: ReadonlySet<MutationKind> = new Set(['wrong-method', 'path-case', 'path-junk', 'bad-path-param']);

/** What applying a mutation needs from the episode. */
export interface MutationContext {
  world: EpisodeWorld;
  keys: Record<string, string>;
  products: readonly string[];
  /** The sandbox's signing secret: the fuzzer runs in-process, so it can sign tokens whose claims are wrong. */
  jwtSecret: string;
  now(): number;
  /** Methods the document defines at a path. */
  methodsAt(path: string): string[];
}

// Header values an HTTP request can carry: visible ASCII, space and obs-text.
const headerText = (maxLength: number) =>
  fc.string({
    unit: fc
      .integer({ min: 0x20, max: 0xff })
      .filter((c) => c !== 0x7f)
      .map((c) => String.fromCharCode(c)),
    maxLength,
  });
const printable = (maxLength: number) => fc.string({ unit: 'grapheme-ascii', maxLength });

const ODD_STRINGS = [
  '',
  ' ',
  '-1',
  '0',
  '00',
  '1e999',
  'NaN',
  'Infinity',
  'null',
  'true',
  '[]',
  '{}',
  '../../etc/passwd',
  '<script>alert(1)</script>',
  "' OR 1=1 --",
  '%00',
  '\u0000',
  '\ud800',
  'EUR ',
  'eur',
  '\u0661\u0662\u0663',
  '\uff11\uff12\uff13',
  '12,50',
  '+1',
  '0x10',
  '1_000',
  '\u202e46733123450',
  'ID:46733123450/msisdn',
  'MSISDN',
  'http://',
  'ftp://127.0.0.1/',
  'javascript:alert(1)',
  'http://127.0.0.1:99999/',
  '\u{1F4A9}',
  'a\r\nb',
];

const ANY_JSON: fc.Arbitrary<unknown> = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.string({ maxLength: 4 }), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 4 }), fc.string({ maxLength: 4 }), { maxKeys: 3 }),
  fc.constant({}),
  fc.constant([]),
);

const pick = fc.nat();

/** The mutations that make sense for an operation: body ones only where it takes a body, and so on. */
export function mutationArbitrary(op: ModelOperation): fc.Arbitrary<Mutation> {
  const options: fc.Arbitrary<Mutation>[] = [
    fc.constant({ kind: 'no-subscription-key' as const }),
    fc.record({ kind: fc.constant('unknown-subscription-key' as const), value: headerText(80) }),
    fc.record({
      kind: fc.constant('extra-headers' as const),
      headers: fc.array(
        fc.tuple(
          fc.oneof(
            fc.constantFrom('x-http-method-override', 'x-forwarded-host', 'x-original-url', 'expect', 'x-reference-id', 'accept'),
            fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/),
          ),
          headerText(40),
        ),
        { minLength: 1, maxLength: 4 },
      ),
    }),
    fc.record({ kind: fc.constant('wrong-method' as const), method: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS') }),
    fc.constant({ kind: 'path-case' as const }),
    fc.record({
      kind: fc.constant('path-junk' as const),
      suffix: fc.constantFrom('/x', '//', '/..', '/%2e%2e', '/.', ';x', '.json', '/%00', '/%ZZ'),
    }),
    fc.record({
      kind: fc.constant('query-junk' as const),
      query: fc.oneof(
        fc.constantFrom('?', '?a=1&a=2', '?__proto__[x]=1', '?%ZZ', '?x=%00'),
        printable(30).map((q) => `?${encodeURIComponent(q)}`),
      ),
    }),
  ];
  if (op.product !== 'provisioning') options.push(fc.record({ kind: fc.constant('other-product-key' as const), pick }));
  if (op.credential) {
    options.push(
      fc.constant({ kind: 'no-credential' as const }),
      fc.record({
        kind: fc.constant('garbage-authorization' as const),
        value: fc.oneof(
          fc.constantFrom('Bearer', 'Bearer ', 'Basic', 'Basic ', 'Bearer a b', 'Digest x', 'bearer', 'Token abc'),
          headerText(60),
        ),
      }),
      fc.record({ kind: fc.constant('other-product-credential' as const), pick }),
    );
    options.push(
      op.credential === 'apiUserBasic'
        ? fc.record({
            kind: fc.constant('bad-basic' as const),
            variant: fc.constantFrom<BadBasic>(
              'unknown-user',
              'wrong-key',
              'no-colon',
              'not-base64',
              'empty',
              'upper-case-id',
              'huge',
              'other-text',
            ),
            value: printable(40),
          })
        : fc.record({
            kind: fc.constant('forged-token' as const),
            variant: fc.constantFrom<ForgedToken>(
              'alg-none',
              'other-secret',
              'bad-signature',
              'expired',
              'unknown-user',
              'other-product',
              'wrong-use',
              'missing-claims',
              'random',
              'not-a-jwt',
            ),
            value: fc.stringMatching(/^[A-Za-z0-9_-]{1,60}$/),
          }),
    );
    if (op.credential !== 'apiUserBasic') options.push(fc.constant({ kind: 'wrong-token-kind' as const }));
  }
  const headers = op.parameters.filter((p) => p.in === 'header');
  if (headers.some((p) => p.required)) options.push(fc.record({ kind: fc.constant('missing-header' as const), pick }));
  if (headers.length > 0) {
    options.push(
      fc.record({
        kind: fc.constant('malformed-header' as const),
        pick,
        value: fc.oneof(
          fc.constantFrom(...ODD_STRINGS.filter((s) => /^[\x20-\x7e\x80-\xff]*$/.test(s))),
          headerText(40),
          fc.constantFrom(
            'a'.repeat(5000),
            '6ba7b810-9dad-11d1-80b4-00c04fd430c8',
            'SANDBOX',
            'sandbox ',
            'http://callbacks.example.com/x',
            'http://127.0.0.1:1/x',
          ),
        ),
      }),
    );
  }
  if (op.parameters.some((p) => p.in === 'path')) {
    options.push(
      fc.record({
        kind: fc.constant('bad-path-param' as const),
        pick,
        value: fc.oneof(
          printable(30),
          fc.string({ unit: 'grapheme', maxLength: 10 }),
          fc.constantFrom(
            '',
            '.',
            '..',
            '/',
            'a'.repeat(201),
            'a'.repeat(2000),
            '6BA7B810-9DAD-41D1-80B4-00C04FD430C8',
            '6ba7b810-9dad-11d1-80b4-00c04fd430c8',
            'EUR ',
            'eur',
            'MSISDN',
            'msisdn',
            '46733123450',
            '%',
            '%ZZ',
            '%2F',
            '%00',
            '%C0%AF',
            '%E2%80%AE',
            '%u0041',
          ),
        ),
        raw: fc.boolean(),
      }),
    );
  }
  if (op.body) {
    options.push(
      fc.record({ kind: fc.constant('missing-field' as const), pick }),
      fc.record({
        kind: fc.constant('extra-field' as const),
        name: fc.oneof(fc.constantFrom('extra', 'status', 'amount2', 'Amount', 'financialTransactionId', ''), printable(12)),
        value: ANY_JSON,
      }),
      fc.record({ kind: fc.constant('mistyped-field' as const), pick, value: ANY_JSON }),
      fc.record({ kind: fc.constant('wrong-format' as const), pick, value: fc.oneof(fc.constantFrom(...ODD_STRINGS), printable(30)) }),
      fc.record({
        kind: fc.constant('huge-string' as const),
        pick,
        length: fc.integer({ min: 161, max: 80_000 }),
        unit: fc.constantFrom('a', '9', 'é', '\u{1D11E}', ' '),
      }),
      fc.record({
        kind: fc.constant('unicode-string' as const),
        pick,
        value: fc.oneof(
          fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }),
          fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }),
        ),
      }),
      fc.record({
        kind: fc.constant('prototype-pollution' as const),
        variant: fc.constantFrom('proto-top' as const, 'proto-nested' as const, 'constructor-prototype' as const),
      }),
      fc.record({
        kind: fc.constant('garbage-body' as const),
        value: fc.oneof(
          fc.constantFrom(
            '{',
            '{"amount":',
            'null',
            '[]',
            '"text"',
            '42',
            'true',
            '{}}',
            "{'a':1}",
            'NaN',
            '\u0000',
            '<xml/>',
            'a=1&a=2',
            '%',
            '\ufeff{}',
          ),
          printable(60),
          fc.uint8Array({ minLength: 1, maxLength: 64 }),
        ),
      }),
      fc.record({ kind: fc.constant('empty-body' as const), withContentType: fc.boolean() }),
      fc.constant({ kind: 'no-body' as const }),
      fc.record({
        kind: fc.constant('wrong-content-type' as const),
        value: fc.constantFrom(
          'text/plain',
          'application/xml',
          'multipart/form-data; boundary=x',
          'application/json; charset=utf-8',
          'APPLICATION/JSON',
          'application/jsonp',
          'application/x-www-form-urlencoded',
          'application/json',
          '',
          'garbage',
          '*/*',
          'application/merge-patch+json',
          'application/x-www-form-urlencoded; charset=utf-8',
        ),
      }),
      fc.record({ kind: fc.constant('deep-nesting' as const), pick, depth: fc.integer({ min: 50, max: 20_000 }) }),
      fc.record({ kind: fc.constant('duplicate-key' as const), pick, value: ANY_JSON }),
    );
  } else {
    options.push(
      fc.record({
        kind: fc.constant('body-on-bodyless' as const),
        value: fc.oneof(fc.constantFrom('{}', '{"a":1}', 'x', '\u0000'), printable(40)),
        contentType: fc.constantFrom('application/json', 'text/plain', null),
      }),
    );
  }
  return fc.oneof(...options);
}

export function applyMutation(parts: RequestParts, mutation: Mutation, op: ModelOperation, context: MutationContext): RequestParts {
  const headers = parts.headers;
  const fields = () => leafPaths(parts.body, op.body?.mediaType === 'application/json');
  switch (mutation.kind) {
    case 'no-subscription-key':
      delete headers['ocp-apim-subscription-key'];
      break;
    case 'unknown-subscription-key':
      headers['ocp-apim-subscription-key'] = mutation.value;
      break;
    case 'other-product-key': {
      const others = context.products.filter((p) => p !== op.product);
      headers['ocp-apim-subscription-key'] = context.keys[others[mutation.pick % others.length]!]!;
      break;
    }
    case 'no-credential':
      delete headers.authorization;
      break;
    case 'garbage-authorization':
      headers.authorization = mutation.value;
      break;
    case 'forged-token':
      headers.authorization = `Bearer ${forgeToken(mutation.variant, mutation.value, op, context)}`;
      break;
    case 'other-product-credential': {
      const others = context.world.allCredentials().filter((c) => c.scheme === op.credential && c.product !== op.product);
      if (others.length > 0) headers.authorization = others[mutation.pick % others.length]!.value;
      else delete headers.authorization;
      break;
    }
    case 'wrong-token-kind': {
      const other = context.world
        .allCredentials()
        .find((c) => c.scheme !== op.credential && c.product === op.product && c.value.startsWith('Bearer '));
      if (other) headers.authorization = other.value;
      else delete headers.authorization;
      break;
    }
    case 'bad-basic':
      headers.authorization = badBasic(mutation.variant, mutation.value, headers.authorization);
      break;
    case 'missing-header': {
      const required = op.parameters.filter((p) => p.in === 'header' && p.required);
      delete headers[required[mutation.pick % required.length]!.name];
      break;
    }
    case 'malformed-header': {
      const all = op.parameters.filter((p) => p.in === 'header');
      headers[all[mutation.pick % all.length]!.name] = mutation.value;
      break;
    }
    case 'extra-headers':
      for (const [name, value] of mutation.headers) if (!(name in headers)) headers[name] = value;
      break;
    case 'missing-field': {
      const paths = fields();
      if (paths.length > 0) setAt(parts.body, paths[mutation.pick % paths.length]!, undefined);
      break;
    }
    case 'extra-field':
      if (isObject(parts.body)) parts.body[mutation.name || 'extra'] = mutation.value;
      break;
    case 'mistyped-field':
    case 'wrong-format':
    case 'unicode-string': {
      const paths = fields();
      if (paths.length > 0) setAt(parts.body, paths[mutation.pick % paths.length]!, mutation.value);
      break;
    }
    case 'huge-string': {
      const paths = fields();
      if (paths.length > 0) setAt(parts.body, paths[mutation.pick % paths.length]!, mutation.unit.repeat(mutation.length));
      break;
    }
    case 'deep-nesting': {
      const paths = fields();
      const marker = 'fuzz-deep-nesting-marker';
      const deep = `${'['.repeat(mutation.depth)}1${']'.repeat(mutation.depth)}`;
      if (paths.length > 0) setAt(parts.body, paths[mutation.pick % paths.length]!, marker);
      const encoded = encodeBody(parts.body, op.body?.mediaType);
      parts.rawBody =
        op.body?.mediaType === 'application/json'
          ? encoded.replace(JSON.stringify(marker), deep)
          : encoded.replace(marker, encodeURIComponent(deep));
      break;
    }
    case 'duplicate-key': {
      const paths = fields().filter((p) => p.length === 1);
      const name = paths.length > 0 ? paths[mutation.pick % paths.length]![0]! : 'amount';
      const encoded = encodeBody(parts.body, op.body?.mediaType);
      parts.rawBody =
        op.body?.mediaType === 'application/json'
          ? encoded.replace(/^\{/, `{${JSON.stringify(name)}:${JSON.stringify(mutation.value)},`).replace(/,\}$/, '}')
          : `${encoded}&${encodeURIComponent(name)}=${encodeURIComponent(JSON.stringify(mutation.value))}`;
      break;
    }
    case 'prototype-pollution':
      parts.rawBody = polluted(encodeBody(parts.body, op.body?.mediaType), mutation.variant, op.body?.mediaType === 'application/json');
      break;
    case 'garbage-body':
      parts.rawBody = typeof mutation.value === 'string' ? mutation.value : Buffer.from(mutation.value);
      break;
    case 'empty-body':
      parts.body = undefined;
      parts.rawBody = mutation.withContentType ? '' : undefined;
      if (!mutation.withContentType) parts.contentType = null;
      break;
    case 'no-body':
      parts.body = undefined;
      break;
    case 'wrong-content-type':
      parts.contentType = mutation.value;
      break;
    case 'body-on-bodyless':
      parts.rawBody = mutation.value;
      parts.contentType = mutation.contentType;
      break;
    case 'bad-path-param': {
      const names = Object.keys(parts.pathParams);
      const name = names[mutation.pick % names.length]!;
      parts.pathParams[name] = mutation.value;
      if (mutation.raw) parts.rawPathParams.add(name);
      break;
    }
    case 'wrong-method': {
      const taken = context.methodsAt(op.path);
      parts.method = taken.includes(mutation.method) ? (taken.includes('PUT') ? 'DELETE' : 'PUT') : mutation.method;
      break;
    }
    case 'path-case':
      parts.path = op.path
        .toUpperCase()
        .replace(/\{([^}]+)\}/g, (_, name: string) =>
          encodeURIComponent(parts.pathParams[name.toLowerCase()] ?? parts.pathParams[name] ?? 'x'),
        );
      break;
    case 'path-junk':
      parts.path = `${op.path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(parts.pathParams[name] ?? ''))}${mutation.suffix}`;
      break;
    case 'query-junk':
      parts.query = mutation.query;
      break;
  }
  return parts;
}

/** A body as its operation's media type encodes it; a form repeats the key of an array and sends anything else not a string as its JSON. */
export function encodeBody(body: unknown, mediaType = 'application/json'): string {
  if (!mediaType.startsWith('application/x-www-form-urlencoded')) return JSON.stringify(body ?? {});
  if (!isObject(body)) return encodeURIComponent(JSON.stringify(body));
  const form = new URLSearchParams();
  for (const [key, inner] of Object.entries(body)) {
    // An empty array still sends its key, empty: a field the mutation added must not vanish.
    const items = Array.isArray(inner) ? (inner.length > 0 ? inner : ['']) : [inner];
    for (const item of items) form.append(key, typeof item === 'string' ? item : JSON.stringify(item));
  }
  return form.toString();
}

function polluted(encoded: string, variant: 'proto-top' | 'proto-nested' | 'constructor-prototype', json: boolean): string {
  if (!json) {
    const extra = {
      'proto-top': '__proto__[polluted]=yes',
      'proto-nested': '__proto__=polluted',
      'constructor-prototype': 'constructor[prototype][polluted]=yes',
    }[variant];
    return encoded ? `${encoded}&${extra}` : extra;
  }
  const injected =
    variant === 'constructor-prototype' ? '"constructor":{"prototype":{"polluted":"yes"}}' : '"__proto__":{"polluted":"yes"}';
  if (variant === 'proto-nested') {
    // Into the first nested object (payer, payee), else at the top.
    const nested = encoded.replace(/:\{/, `:{${injected},`);
    if (nested !== encoded) return nested.replace(/,\}/, '}');
  }
  return encoded === '{}' ? `{${injected}}` : encoded.replace(/^\{/, `{${injected},`);
}

function forgeToken(variant: ForgedToken, text: string, op: ModelOperation, context: MutationContext): string {
  const current = context.world.credential(op.credential ?? '', op.product)?.replace(/^Bearer /, '');
  const claims = decodeClaims(current) ?? {
    sub: '00000000-0000-4000-8000-000000000000',
    prd: op.product,
    use: 'access',
    iat: 0,
    exp: Math.ceil(context.now() / 1000) + 3600,
    jti: 'fuzz',
  };
  const sign = (payload: Record<string, unknown>, key = context.jwtSecret) =>
    createSigner({ key, algorithm: 'HS256', noTimestamp: true })(payload);
  const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  switch (variant) {
    case 'alg-none':
      return `${base64url({ alg: 'none', typ: 'JWT' })}.${base64url(claims)}.`;
    case 'other-secret':
      return sign(claims, `not-the-sandbox-secret-${text}`);
    case 'bad-signature': {
      const token = current ?? sign(claims);
      return `${token.slice(0, -4)}${token.slice(-4) === 'AAAA' ? 'BBBB' : 'AAAA'}`;
    }
    case 'expired':
      return sign({ ...claims, exp: Math.floor(context.now() / 1000) - 1 });
    case 'unknown-user':
      return sign({ ...claims, sub: '6ba7b810-9dad-41d1-80b4-00c04fd430c8' });
    case 'other-product':
      return sign({ ...claims, prd: context.products.find((p) => p !== op.product) });
    case 'wrong-use':
      return sign({ ...claims, use: claims.use === 'access' ? 'consent' : 'access' });
    case 'missing-claims':
      return sign({ sub: claims.sub });
    case 'random':
      return `${text}.${text}.${text}`;
    case 'not-a-jwt':
      return text;
  }
}

function decodeClaims(token: string | undefined): Record<string, unknown> | undefined {
  const payload = token?.split('.')[1];
  if (!payload) return undefined;
  try {
    return JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

function badBasic(variant: BadBasic, text: string, current: string | undefined): string {
  const decoded = current ? Buffer.from(current.replace(/^Basic /, ''), 'base64').toString('utf8') : 'unknown:key';
  const [user = 'unknown', key = 'key'] = decoded.split(/:(.*)/s);
  const encode = (value: string) => `Basic ${Buffer.from(value).toString('base64')}`;
  switch (variant) {
    case 'unknown-user':
      return encode(`6ba7b810-9dad-41d1-80b4-00c04fd430c8:${key}`);
    case 'wrong-key':
      return encode(`${user}:${key}${text || 'x'}`);
    case 'no-colon':
      return encode(`${user}${key}`);
    case 'not-base64':
      return `Basic ${text || '!!!'}`;
    case 'empty':
      return 'Basic ';
    case 'upper-case-id':
      // UUIDs compare without regard to case: this one must still sign in.
      return encode(`${user.toUpperCase()}:${key}`);
    case 'huge':
      return encode(`${user}:${key.repeat(200)}`);
    case 'other-text':
      return encode(text);
  }
}

type Path = (string | number)[];

/** Paths of the body's values: nested ones for JSON, top-level for forms. */
function leafPaths(value: unknown, nested: boolean, prefix: Path = []): Path[] {
  if (!isObject(value)) return prefix.length > 0 ? [prefix] : [];
  const entries = Object.entries(value);
  if (entries.length === 0) return prefix.length > 0 ? [prefix] : [];
  return entries.flatMap(([key, inner]) =>
    nested && isObject(inner) ? [[...prefix, key], ...leafPaths(inner, nested, [...prefix, key])] : [[...prefix, key]],
  );
}

function setAt(root: unknown, path: Path, value: unknown): void {
  let node = root as Record<string | number, unknown>;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  const last = path[path.length - 1]!;
  if (value === undefined) delete node[last];
  else node[last] = value;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
