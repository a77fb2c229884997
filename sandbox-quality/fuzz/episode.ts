import { pathOf } from '../../core/catalogue/routes.ts';
import type { ApiModel, ModelOperation } from './openapi-model.ts';

/** What one request got back, as the fuzzer reads it. */
export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** The pools of values an episode has learned, and the credentials it holds. */
const POOL_SIZE = 32;

/**
 * What the fuzzer knows during one episode: the credentials of its own API users (one per product), and
 * the ids and values earlier answers handed out, so later requests can name a resource that exists.
 * Everything here is learned from the answers themselves, as a client would; nothing is read from the
 * sandbox's memory.
 */
export class EpisodeWorld {
  private readonly pools = new Map<string, string[]>();
  /** Authorization header values by `${security scheme}:${product}`. */
  private readonly credentials = new Map<string, string>();
  /** The fuzzer's own API users, by id (lower case): their product. */
  private readonly users = new Map<string, string>();
  readonly basicScheme: string | undefined;
  private readonly creators: Set<string>;

  constructor(private readonly model: ApiModel) {
    this.basicScheme = Object.entries(model.schemes).find(([, s]) => s.type === 'http' && s.scheme === 'basic')?.[0];
    this.creators = new Set(model.operations.filter(isCreator).map((op) => op.path));
  }

  credential(scheme: string, product: string): string | undefined {
    return this.credentials.get(`${scheme}:${product}`);
  }

  /** Every credential held, for the mutations that send one where another belongs. */
  allCredentials(): { scheme: string; product: string; value: string }[] {
    return [...this.credentials].map(([key, value]) => {
      const [scheme, product] = key.split(':') as [string, string];
      return { scheme, product, value };
    });
  }

  adoptUser(id: string, product: string): void {
    this.users.set(id.toLowerCase(), product);
  }

  pool(name: string): readonly string[] {
    return this.pools.get(name) ?? [];
  }

  /** The pool a path parameter, the X-Reference-Id of a creation or a body field draws known values from. */
  poolFor(op: ModelOperation, slot: string): string | undefined {
    const [where, name] = slot.split(':') as [string, string];
    if (where === 'path') {
      const prefix = op.path.slice(0, op.path.indexOf(`/{${name}}`));
      return this.creators.has(prefix) ? `resource:${prefix}` : undefined;
    }
    if (where === 'header') return isCreator(op) ? `resource:${op.path}` : undefined;
    return LINKS[name] ?? `field:${op.product}:${name}`;
  }

  remember(pool: string, value: string): void {
    const values = this.pools.get(pool) ?? [];
    if (values.includes(value)) return;
    values.push(value);
    if (values.length > POOL_SIZE) values.shift();
    this.pools.set(pool, values);
  }

  /** Reads what a successful answer hands out: a created resource's id, ids in its body, credentials. */
  learn(op: ModelOperation, request: { headers: Record<string, string>; pathParams: Record<string, string> }, answer: Answer): void {
    if (answer.status < 200 || answer.status >= 300) return;
    const referenceId = request.headers['x-reference-id'];
    if (isCreator(op) && referenceId !== undefined) this.remember(`resource:${op.path}`, referenceId);
    const body = parseJson(answer.body);
    if (body === null || typeof body !== 'object' || Array.isArray(body)) return;
    for (const [key, value] of Object.entries(body)) if (typeof value === 'string') this.remember(`field:${op.product}:${key}`, value);
    const record = body as Record<string, unknown>;
    if (typeof record.access_token === 'string') {
      // The 200 answer's schema names the credential it is: component AccessToken for scheme accessToken.
      const component = op.responses.get(answer.status)?.components[0];
      const scheme = component && component[0]!.toLowerCase() + component.slice(1);
      if (scheme && this.model.schemes[scheme]) this.credentials.set(`${scheme}:${op.product}`, `Bearer ${record.access_token}`);
    }
    const userId = request.pathParams.referenceId?.toLowerCase();
    const userProduct = userId === undefined ? undefined : this.users.get(userId);
    if (typeof record.apiKey === 'string' && userProduct !== undefined && this.basicScheme) {
      // A new key replaces the old one: the fuzzer's own user now signs in with it.
      this.credentials.set(
        `${this.basicScheme}:${userProduct}`,
        `Basic ${Buffer.from(`${request.pathParams.referenceId}:${record.apiKey}`).toString('base64')}`,
      );
    }
  }
}

/** Body fields whose values are ids of a resource another operation creates. */
const LINKS: Record<string, string> = {
  referenceIdToRefund: `resource:${pathOf('requestToPay')}`,
};

/** A creation: POST with the id of the new resource in a required X-Reference-Id. */
export function isCreator(op: ModelOperation): boolean {
  return op.method === 'POST' && op.parameters.some((p) => p.in === 'header' && p.name === 'x-reference-id' && p.required);
}

export function parseJson(text: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
