import type { Product } from '../products.ts';
import type { ProfileBehaviour } from '../profiles.ts';
import type { SchemaName } from '../schema-ids.ts';
import {
  OPERATIONS,
  OPERATION_IDS,
  isOperationId,
  type TransactionStore,
  type BodySchema,
  type ProfileDependentBody,
  type Host,
  type Operation,
  type OperationId,
  type ProductBinding,
  type ResponseSpec,
  type SpecOperation,
} from './operations.ts';

/**
 * What the rest of the project asks of the catalogue: an operation's binding under a product, its path and
 * URL, the routes a server registers, the schemas of a response, and the spec's count of operations. Pure
 * functions over plain data, so the k6 scripts use them as the Node code does.
 */

export function operation(id: OperationId): Operation<OperationId> {
  return OPERATIONS[id];
}

/** The products an operation is served under. */
export function productsOf(id: OperationId): Product[] {
  return Object.keys(OPERATIONS[id].products) as Product[];
}

export function bindingOf(id: OperationId, product: Product): ProductBinding {
  const binding = OPERATIONS[id].products[product];
  if (!binding)
    throw new Error(
      `The operation ${id} is not served under ${product} (core/catalogue/operations.ts serves it under ${productsOf(id).join(', ')}).`,
    );
  return binding;
}

export function isServedUnder(id: OperationId, product: Product): boolean {
  return OPERATIONS[id].products[product] !== undefined;
}

/** Path parameters by name; a value is percent-encoded into its segment. */
export type PathParams = Readonly<Record<string, string>>;

/**
 * The path of an operation under a product, with its parameters filled in: pathOf('getRequestToPayStatus',
 * 'collection', { referenceId }) is the request-to-pay path under collection, ending in the encoded id. Without `params` the {name}
 * placeholders stay, which is the template the OpenAPI document shows.
 */
export function pathOf(id: OperationId, product?: Product, params?: PathParams): string {
  const op = OPERATIONS[id];
  let path = op.path;
  if (product !== undefined) bindingOf(id, product);
  if (path.includes('{product}')) {
    const served = product ?? (productsOf(id).length === 1 ? productsOf(id)[0] : undefined);
    if (!served) throw new Error(`The path of ${id} names its product: say which (${productsOf(id).join(', ')}).`);
    path = path.replace('{product}', served);
  }
  if (!params) return path;
  return path.replace(/\{([A-Za-z]+)\}/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`The path of ${id} needs the parameter ${name}.`);
    return encodeURIComponent(value);
  });
}

/** The path as a router pattern: {name} becomes :name. */
export function routePatternOf(id: OperationId, product?: Product): string {
  return pathOf(id, product).replace(/\{([A-Za-z]+)\}/g, ':$1');
}

export function hostOf(id: OperationId, product: Product): Host {
  return bindingOf(id, product).host;
}

/** The base URLs of a target: {base_url} and {sandbox_url} (the same server when it serves both). */
export interface TargetBases {
  gateway: string;
  provisioning: string;
}

/** The absolute URL of an operation under a product on a target. */
export function urlOf(id: OperationId, product: Product, bases: TargetBases, params?: PathParams): string {
  return `${bases[hostOf(id, product)]}${pathOf(id, product, params)}`;
}

/** One route a server registers: an operation, under a product (undefined for operations any product's key opens). */
export interface Route {
  operation: Operation<OperationId>;
  product: Product | undefined;
  method: 'GET' | 'POST';
  /** The path with {name} placeholders. */
  path: string;
}

/**
 * Every route of the catalogue: one per product for paths that name their product, one for paths that do
 * not (provisioning, whose every product shares the path), one for a path only one product serves.
 */
export function routes(): Route[] {
  const out: Route[] = [];
  for (const id of OPERATION_IDS) {
    const op = OPERATIONS[id];
    if (op.key === 'any') {
      out.push({ operation: op, product: undefined, method: op.method, path: op.path });
      continue;
    }
    for (const product of productsOf(id)) out.push({ operation: op, product, method: op.method, path: pathOf(id, product) });
  }
  return out;
}

/** The statuses an operation answers in success (2xx). */
export function successStatuses(id: OperationId): number[] {
  return Object.keys(OPERATIONS[id].responses)
    .map(Number)
    .filter((s) => s >= 200 && s < 300);
}

/**
 * The schemas a body of this response may match (any one) under a profile's behaviour, `errors` read as the
 * binding's error set; empty: the status has no body. Without a behaviour, every schema any profile allows.
 */
export function bodySchemasOf(response: ResponseSpec, errors: SchemaName, behaviour?: ProfileBehaviour): SchemaName[] {
  const body: BodySchema | undefined = response.body;
  if (body === undefined) return [];
  if (typeof body === 'string') return [body === 'errors' ? errors : body];
  if (isProfileDependent(body)) {
    return behaviour ? [body.schemas[String(behaviour[body.difference])]!] : [...new Set(Object.values(body.schemas))];
  }
  return body.map((b) => (b === 'errors' ? errors : b));
}

function isProfileDependent(body: BodySchema): body is ProfileDependentBody {
  return typeof body === 'object' && 'difference' in body;
}

/** The 19 operations the spec counts, in the spec's order: §4.2 #1–#8, §4.3, §4.4, §4.5, then §4.6's status queries. */
export const SPEC_OPERATIONS: readonly SpecOperation[] = OPERATION_IDS.flatMap((id) => OPERATIONS[id].spec ?? []).sort(
  (a, b) => specOrder(a.key) - specOrder(b.key),
);

function specOrder(key: string): number {
  const match = /^4\.(\d) (?:#(\d+))?/.exec(key);
  if (!match) return Number.MAX_SAFE_INTEGER;
  // §4.6's status queries have no number; they keep the catalogue's order after the numbered ones.
  return (
    Number(match[1]) * 1000 +
    (match[2] ? Number(match[2]) : 900 + OPERATION_IDS.findIndex((id) => OPERATIONS[id].spec?.some((s) => s.key === key)))
  );
}

/** The key of the spec operation that `id` under `product` counts as, or undefined when it is none of the 19. */
export function specOperationOf(id: OperationId, product: Product): string | undefined {
  return OPERATIONS[id].spec?.find((s) => s.products.includes(product))?.key;
}

/** "request to pay (collection)": how messages name an operation called under a product. */
export function labelOf(id: OperationId, product: Product): string {
  return `${OPERATIONS[id].label} (${product})`;
}

/** The creations of transactions (request to pay, refund, deposit), each with the operation that reads its status. */
export const TRANSACTIONS: readonly { create: OperationId; status: OperationId; store: TransactionStore }[] = OPERATION_IDS.filter(
  (id) => OPERATIONS[id].statusQuery !== undefined,
).map((id) => {
  const { statusQuery, store } = OPERATIONS[id];
  if (!store || !isOperationId(statusQuery!))
    throw new Error(`The creation ${id} names no store, or a status query the catalogue lacks (core/catalogue/operations.ts).`);
  return { create: id, status: statusQuery, store };
});

/** The status query of a creation. */
export function statusQueryOf(create: OperationId): OperationId {
  const found = TRANSACTIONS.find((t) => t.create === create);
  if (!found) throw new Error(`${create} creates no transaction with a status query.`);
  return found.status;
}
