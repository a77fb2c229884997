import { startSandbox } from './sandbox.ts';
import type { SandboxSettings } from '../../sandbox/domain/settings.ts';

/** An OpenAPI document as the tests read it. */
export interface OpenApiDocument {
  openapi: string;
  servers?: { url: string }[];
  paths: Record<string, Record<string, OpenApiOperation>>;
  components: { schemas: Record<string, Record<string, unknown>> };
}

export interface OpenApiOperation {
  operationId: string;
  tags: string[];
  'x-operation': string;
  'x-beyond-spec'?: true;
  description: string;
  parameters?: {
    name: string;
    in: string;
    schema: Record<string, unknown>;
    'x-depends-on'?: { parameter: string; forms: Record<string, unknown> };
  }[];
  requestBody?: { content: Record<string, { schema: Record<string, unknown> }> };
  responses: Record<string, { description: string; content?: Record<string, { schema: Record<string, unknown> }> }>;
}

/** The document a sandbox of these settings serves at GET /openapi.json. */
export async function servedDocument(overrides: Partial<SandboxSettings> = {}): Promise<OpenApiDocument> {
  const sandbox = await startSandbox(overrides);
  try {
    return (await sandbox.call({ method: 'GET', url: '/openapi.json' })).json() as OpenApiDocument;
  } finally {
    await sandbox.close();
  }
}

/** Every $ref in a value, in the order met. */
export function refsIn(value: unknown, found: string[] = []): string[] {
  if (Array.isArray(value)) for (const v of value) refsIn(v, found);
  else if (value && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      if (key === '$ref' && typeof inner === 'string') found.push(inner);
      else refsIn(inner, found);
    }
  }
  return found;
}

/** The operations of a document, each with its method and path. */
export function operationsOf(doc: OpenApiDocument): (OpenApiOperation & { method: string; path: string })[] {
  return Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({ ...op, method: method.toUpperCase(), path })),
  );
}
