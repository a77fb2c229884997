/**
 * Validators for the project's JSON Schemas, compiled by ajv when the bundle is built (load/build.ts),
 * so that k6 never compiles a schema at run time.
 */
declare module 'virtual:validators' {
  export interface CompiledValidator {
    (data: unknown): boolean;
    errors?: { instancePath: string; message?: string }[] | null;
  }
  export const validators: Record<string, CompiledValidator>;
}
