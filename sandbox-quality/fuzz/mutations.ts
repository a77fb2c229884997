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

// The values the mutations below draw from; their order is part of what a seed gives.
const EXTRA_HEADER_NAMES = ['x-http-method-override', 'x-forwarded-host', 'x-original-url', 'expect', 'x-reference-id', 'accept'];
const AUTHORIZATION_GARBAGE = ['Bearer', 'Bearer ', 'Basic', 'Basic ', 'Bearer a b', 'Digest x', 'bearer', 'Token abc'];
const BAD_BASICS: readonly BadBasic[] = [
  'unknown-user',
  'wrong-key',
  'no-colon',
  'not-base64',
  'empty',
  'upper-case-id',
  'huge',
  'other-text',
];
const FORGED_TOKENS: readonly ForgedToken[] = [
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
];
const ODD_HEADER_VALUES = [
  'a'.repeat(5000),
  '6ba7b810-9dad-11d1-80b4-00c04fd430c8',
  'SANDBOX',
  'sandbox ',
  'http://callbacks.example.com/x',
  'http://127.0.0.1:1/x',
];
const ODD_PATH_PARAMS = [
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
];
const GARBAGE_BODIES = [
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
];
const WRONG_CONTENT_TYPES = [
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
];

type MutationOf<Kind extends MutationKind> = Extract<Mutation, { kind: Kind }>;

/** One kind of malformation: the operations it makes sense for, its values as fast-check draws them, and how it breaks a request. */
interface MutationDefinition<Kind extends MutationKind> {
  /** Absent: every operation. */
  appliesTo?: (op: ModelOperation) => boolean;
  arbitrary: fc.Arbitrary<MutationOf<Kind>>;
  apply(parts: RequestParts, mutation: MutationOf<Kind>, op: ModelOperation, context: MutationContext): void;
}

const takesCredential = (op: ModelOperation) => Boolean(op.credential);
const takesToken = (op: ModelOperation) => takesCredential(op) && op.credential !== 'apiUserBasic';
const takesBody = (op: ModelOperation) => Boolean(op.body);
const headersOf = (op: ModelOperation) => op.parameters.filter((p) => p.in === 'header');
const isJson = (op: ModelOperation) => op.body?.mediaType === 'application/json';
const pickFrom = <T>(items: readonly T[], pick: number): T => items[pick % items.length]!;

/** The body's field at `pick` (of its leaf paths) set to `value`, or removed for undefined; nothing when it has none. */
function setField(parts: RequestParts, op: ModelOperation, pick: number, value: unknown): void {
  const paths = leafPaths(parts.body, isJson(op));
  if (paths.length > 0) setAt(parts.body, pickFrom(paths, pick), value);
}

/** The credential header replaced by `value`, or removed when there is none to send. */
function setAuthorization(parts: RequestParts, value: string | undefined): void {
  if (value !== undefined) parts.headers.authorization = value;
  else delete parts.headers.authorization;
}

/**
 * Every mutation, in the order fast-check draws among them: oneof picks by position, so this order keeps the
 * mutations a seed gives.
 */
const MUTATIONS: { [Kind in MutationKind]: MutationDefinition<Kind> } = {
  'no-subscription-key': {
    arbitrary: fc.constant({ kind: 'no-subscription-key' as const }),
    apply: (parts) => {
      delete parts.headers['ocp-apim-subscription-key'];
    },
  },
  'unknown-subscription-key': {
    arbitrary: fc.record({ kind: fc.constant('unknown-subscription-key' as const), value: headerText(80) }),
    apply: (parts, mutation) => {
      parts.headers['ocp-apim-subscription-key'] = mutation.value;
    },
  },
  'extra-headers': {
    arbitrary: fc.record({
      kind: fc.constant('extra-headers' as const),
      headers: fc.array(
        fc.tuple(fc.oneof(fc.constantFrom(...EXTRA_HEADER_NAMES), fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/)), headerText(40)),
        { minLength: 1, maxLength: 4 },
      ),
    }),
    apply: (parts, mutation) => {
      for (const [name, value] of mutation.headers) if (!(name in parts.headers)) parts.headers[name] = value;
    },
  },
  'wrong-method': {
    arbitrary: fc.record({
      kind: fc.constant('wrong-method' as const),
      method: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'),
    }),
    apply: (parts, mutation, op, context) => {
      const taken = context.methodsAt(op.path);
      parts.method = taken.includes(mutation.method) ? (taken.includes('PUT') ? 'DELETE' : 'PUT') : mutation.method;
    },
  },
  'path-case': {
    arbitrary: fc.constant({ kind: 'path-case' as const }),
    apply: (parts, _mutation, op) => {
      parts.path = op.path
        .toUpperCase()
        .replace(/\{([^}]+)\}/g, (_, name: string) =>
          encodeURIComponent(parts.pathParams[name.toLowerCase()] ?? parts.pathParams[name] ?? 'x'),
        );
    },
  },
  'path-junk': {
    arbitrary: fc.record({
      kind: fc.constant('path-junk' as const),
      suffix: fc.constantFrom('/x', '//', '/..', '/%2e%2e', '/.', ';x', '.json', '/%00', '/%ZZ'),
    }),
    apply: (parts, mutation, op) => {
      const path = op.path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(parts.pathParams[name] ?? ''));
      parts.path = `${path}${mutation.suffix}`;
    },
  },
  'query-junk': {
    arbitrary: fc.record({
      kind: fc.constant('query-junk' as const),
      query: fc.oneof(
        fc.constantFrom('?', '?a=1&a=2', '?__proto__[x]=1', '?%ZZ', '?x=%00'),
        printable(30).map((q) => `?${encodeURIComponent(q)}`),
      ),
    }),
    apply: (parts, mutation) => {
      parts.query = mutation.query;
    },
  },
  'other-product-key': {
    appliesTo: (op) => op.product !== 'provisioning',
    arbitrary: fc.record({ kind: fc.constant('other-product-key' as const), pick }),
    apply: (parts, mutation, op, context) => {
      const others = context.products.filter((p) => p !== op.product);
      parts.headers['ocp-apim-subscription-key'] = context.keys[pickFrom(others, mutation.pick)]!;
    },
  },
  'no-credential': {
    appliesTo: takesCredential,
    arbitrary: fc.constant({ kind: 'no-credential' as const }),
    apply: (parts) => setAuthorization(parts, undefined),
  },
  'garbage-authorization': {
    appliesTo: takesCredential,
    arbitrary: fc.record({
      kind: fc.constant('garbage-authorization' as const),
      value: fc.oneof(fc.constantFrom(...AUTHORIZATION_GARBAGE), headerText(60)),
    }),
    apply: (parts, mutation) => setAuthorization(parts, mutation.value),
  },
  'other-product-credential': {
    appliesTo: takesCredential,
    arbitrary: fc.record({ kind: fc.constant('other-product-credential' as const), pick }),
    apply: (parts, mutation, op, context) => {
      const others = context.world.allCredentials().filter((c) => c.scheme === op.credential && c.product !== op.product);
      setAuthorization(parts, others.length > 0 ? pickFrom(others, mutation.pick).value : undefined);
    },
  },
  'bad-basic': {
    appliesTo: (op) => takesCredential(op) && !takesToken(op),
    arbitrary: fc.record({ kind: fc.constant('bad-basic' as const), variant: fc.constantFrom(...BAD_BASICS), value: printable(40) }),
    apply: (parts, mutation) => {
      parts.headers.authorization = badBasic(mutation.variant, mutation.value, parts.headers.authorization);
    },
  },
  'forged-token': {
    appliesTo: takesToken,
    arbitrary: fc.record({
      kind: fc.constant('forged-token' as const),
      variant: fc.constantFrom(...FORGED_TOKENS),
      value: fc.stringMatching(/^[A-Za-z0-9_-]{1,60}$/),
    }),
    apply: (parts, mutation, op, context) => {
      parts.headers.authorization = `Bearer ${forgeToken(mutation.variant, mutation.value, op, context)}`;
    },
  },
  'wrong-token-kind': {
    appliesTo: takesToken,
    arbitrary: fc.constant({ kind: 'wrong-token-kind' as const }),
    apply: (parts, _mutation, op, context) => {
      const other = context.world
        .allCredentials()
        .find((c) => c.scheme !== op.credential && c.product === op.product && c.value.startsWith('Bearer '));
      setAuthorization(parts, other?.value);
    },
  },
  'missing-header': {
    appliesTo: (op) => headersOf(op).some((p) => p.required),
    arbitrary: fc.record({ kind: fc.constant('missing-header' as const), pick }),
    apply: (parts, mutation, op) => {
      const required = headersOf(op).filter((p) => p.required);
      delete parts.headers[pickFrom(required, mutation.pick).name];
    },
  },
  'malformed-header': {
    appliesTo: (op) => headersOf(op).length > 0,
    arbitrary: fc.record({
      kind: fc.constant('malformed-header' as const),
      pick,
      value: fc.oneof(
        fc.constantFrom(...ODD_STRINGS.filter((s) => /^[\x20-\x7e\x80-\xff]*$/.test(s))),
        headerText(40),
        fc.constantFrom(...ODD_HEADER_VALUES),
      ),
    }),
    apply: (parts, mutation, op) => {
      parts.headers[pickFrom(headersOf(op), mutation.pick).name] = mutation.value;
    },
  },
  'bad-path-param': {
    appliesTo: (op) => op.parameters.some((p) => p.in === 'path'),
    arbitrary: fc.record({
      kind: fc.constant('bad-path-param' as const),
      pick,
      value: fc.oneof(printable(30), fc.string({ unit: 'grapheme', maxLength: 10 }), fc.constantFrom(...ODD_PATH_PARAMS)),
      raw: fc.boolean(),
    }),
    apply: (parts, mutation) => {
      const name = pickFrom(Object.keys(parts.pathParams), mutation.pick);
      parts.pathParams[name] = mutation.value;
      if (mutation.raw) parts.rawPathParams.add(name);
    },
  },
  'missing-field': {
    appliesTo: takesBody,
    arbitrary: fc.record({ kind: fc.constant('missing-field' as const), pick }),
    apply: (parts, mutation, op) => setField(parts, op, mutation.pick, undefined),
  },
  'extra-field': {
    appliesTo: takesBody,
    arbitrary: fc.record({
      kind: fc.constant('extra-field' as const),
      name: fc.oneof(fc.constantFrom('extra', 'status', 'amount2', 'Amount', 'financialTransactionId', ''), printable(12)),
      value: ANY_JSON,
    }),
    apply: (parts, mutation) => {
      if (isObject(parts.body)) parts.body[mutation.name || 'extra'] = mutation.value;
    },
  },
  'mistyped-field': {
    appliesTo: takesBody,
    arbitrary: fc.record({ kind: fc.constant('mistyped-field' as const), pick, value: ANY_JSON }),
    apply: (parts, mutation, op) => setField(parts, op, mutation.pick, mutation.value),
  },
  'wrong-format': {
    appliesTo: takesBody,
    arbitrary: fc.record({
      kind: fc.constant('wrong-format' as const),
      pick,
      value: fc.oneof(fc.constantFrom(...ODD_STRINGS), printable(30)),
    }),
    apply: (parts, mutation, op) => setField(parts, op, mutation.pick, mutation.value),
  },
  'huge-string': {
    appliesTo: takesBody,
    arbitrary: fc.record({
      kind: fc.constant('huge-string' as const),
      pick,
      length: fc.integer({ min: 161, max: 80_000 }),
      unit: fc.constantFrom('a', '9', 'é', '\u{1D11E}', ' '),
    }),
    apply: (parts, mutation, op) => setField(parts, op, mutation.pick, mutation.unit.repeat(mutation.length)),
  },
  'unicode-string': {
    appliesTo: takesBody,
    arbitrary: fc.record({
      kind: fc.constant('unicode-string' as const),
      pick,
      value: fc.oneof(
        fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }),
        fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }),
      ),
    }),
    apply: (parts, mutation, op) => setField(parts, op, mutation.pick, mutation.value),
  },
  'prototype-pollution': {
    appliesTo: takesBody,
    arbitrary: fc.record({
      kind: fc.constant('prototype-pollution' as const),
      variant: fc.constantFrom('proto-top' as const, 'proto-nested' as const, 'constructor-prototype' as const),
    }),
    apply: (parts, mutation, op) => {
      parts.rawBody = polluted(encodeBody(parts.body, op.body?.mediaType), mutation.variant, isJson(op));
    },
  },
  'garbage-body': {
    appliesTo: takesBody,
    arbitrary: fc.record({
      kind: fc.constant('garbage-body' as const),
      value: fc.oneof(fc.constantFrom(...GARBAGE_BODIES), printable(60), fc.uint8Array({ minLength: 1, maxLength: 64 })),
    }),
    apply: (parts, mutation) => {
      parts.rawBody = typeof mutation.value === 'string' ? mutation.value : Buffer.from(mutation.value);
    },
  },
  'empty-body': {
    appliesTo: takesBody,
    arbitrary: fc.record({ kind: fc.constant('empty-body' as const), withContentType: fc.boolean() }),
    apply: (parts, mutation) => {
      parts.body = undefined;
      parts.rawBody = mutation.withContentType ? '' : undefined;
      if (!mutation.withContentType) parts.contentType = null;
    },
  },
  'no-body': {
    appliesTo: takesBody,
    arbitrary: fc.constant({ kind: 'no-body' as const }),
    apply: (parts) => {
      parts.body = undefined;
    },
  },
  'wrong-content-type': {
    appliesTo: takesBody,
    arbitrary: fc.record({ kind: fc.constant('wrong-content-type' as const), value: fc.constantFrom(...WRONG_CONTENT_TYPES) }),
    apply: (parts, mutation) => {
      parts.contentType = mutation.value;
    },
  },
  'deep-nesting': {
    appliesTo: takesBody,
    arbitrary: fc.record({ kind: fc.constant('deep-nesting' as const), pick, depth: fc.integer({ min: 50, max: 20_000 }) }),
    apply: (parts, mutation, op) => {
      const marker = 'fuzz-deep-nesting-marker';
      const deep = `${'['.repeat(mutation.depth)}1${']'.repeat(mutation.depth)}`;
      setField(parts, op, mutation.pick, marker);
      const encoded = encodeBody(parts.body, op.body?.mediaType);
      parts.rawBody = isJson(op) ? encoded.replace(JSON.stringify(marker), deep) : encoded.replace(marker, encodeURIComponent(deep));
    },
  },
  'duplicate-key': {
    appliesTo: takesBody,
    arbitrary: fc.record({ kind: fc.constant('duplicate-key' as const), pick, value: ANY_JSON }),
    apply: (parts, mutation, op) => {
      const paths = leafPaths(parts.body, isJson(op)).filter((p) => p.length === 1);
      const name = paths.length > 0 ? pickFrom(paths, mutation.pick)[0]! : 'amount';
      const encoded = encodeBody(parts.body, op.body?.mediaType);
      parts.rawBody = isJson(op)
        ? encoded.replace(/^\{/, `{${JSON.stringify(name)}:${JSON.stringify(mutation.value)},`).replace(/,\}$/, '}')
        : `${encoded}&${encodeURIComponent(name)}=${encodeURIComponent(JSON.stringify(mutation.value))}`;
    },
  },
  'body-on-bodyless': {
    appliesTo: (op) => !takesBody(op),
    arbitrary: fc.record({
      kind: fc.constant('body-on-bodyless' as const),
      value: fc.oneof(fc.constantFrom('{}', '{"a":1}', 'x', '\u0000'), printable(40)),
      contentType: fc.constantFrom('application/json', 'text/plain', null),
    }),
    apply: (parts, mutation) => {
      parts.rawBody = mutation.value;
      parts.contentType = mutation.contentType;
    },
  },
};

const MUTATION_KINDS = Object.keys(MUTATIONS) as MutationKind[];

/** The mutations that make sense for an operation: body ones only where it takes a body, and so on. */
export function mutationArbitrary(op: ModelOperation): fc.Arbitrary<Mutation> {
  const kinds = MUTATION_KINDS.filter((kind) => MUTATIONS[kind].appliesTo?.(op) ?? true);
  return fc.oneof(...kinds.map((kind): fc.Arbitrary<Mutation> => MUTATIONS[kind].arbitrary));
}

export function applyMutation(parts: RequestParts, mutation: Mutation, op: ModelOperation, context: MutationContext): RequestParts {
  applyKind(mutation.kind, mutation, parts, op, context);
  return parts;
}

/** A mutation applied by its kind's definition (a type parameter ties the mutation to its kind's `apply`). */
function applyKind<Kind extends MutationKind>(
  kind: Kind,
  mutation: MutationOf<Kind>,
  parts: RequestParts,
  op: ModelOperation,
  context: MutationContext,
): void {
  MUTATIONS[kind].apply(parts, mutation, op, context);
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
