/**
 * A business error's status and code are a pair the catalogue documents for the operation that answers it
 * (core/catalogue/operations.ts, BusinessErrorOf): a pair it does not document fails to compile. The compiler runs
 * here on a snippet that imports the real types, in a program of that snippet and what it imports (no emit, no
 * library checks, no DOM library, and only the snippet checked, to take a few seconds): each line marked refused
 * must draw a diagnostic on that line, and no other line any.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const SNIPPET_FILE = fileURLToPath(new URL('./business-errors-snippet.ts', import.meta.url));

/** Each line of the snippet, with whether the compiler must refuse it. */
const SNIPPET: readonly (readonly [code: string, refused: boolean])[] = [
  ["import type { CreationId } from '../../core/catalogue/operations.ts';", false],
  ["import { sendBusinessError, type OperationReply } from '../../sandbox/http/replies.ts';", false],
  ["import type { RouteHandlers } from '../../sandbox/http/serving.ts';", false],
  ["import type { FastifyReply } from 'fastify';", false],
  ["declare const apiKey: OperationReply<'createApiKey'>;", false],
  ['declare const creations: OperationReply<CreationId>;', false],
  ["declare const creationsAndQuery: OperationReply<CreationId | 'getRequestToPayStatus'>;", false],
  ['declare const unknownOperation: FastifyReply;', false],
  // An operation's own documented pair; a status no operation answers; a code the operation never answers there.
  ["sendBusinessError(apiKey, 404, 'RESOURCE_NOT_FOUND', 'Requested resource was not found.');", false],
  ["sendBusinessError(apiKey, 418, 'TEAPOT', 'I am a teapot.');", true],
  ["sendBusinessError(apiKey, 404, 'RESOURCE_ALREADY_EXIST', 'Duplicated.');", true],
  // A helper shared by several operations sends only what each of them documents.
  ["sendBusinessError(creations, 409, 'RESOURCE_ALREADY_EXIST', 'Duplicated.');", false],
  ["sendBusinessError(creationsAndQuery, 409, 'RESOURCE_ALREADY_EXIST', 'Duplicated.');", true],
  // A reply of no known operation (a guard's, the error handler's) sends only what any operation may answer.
  ["sendBusinessError(unknownOperation, 503, 'SERVICE_UNAVAILABLE', 'Try again later.');", false],
  ["sendBusinessError(unknownOperation, 500, 'NOT_ALLOWED_TARGET_ENVIRONMENT', 'Forbidden.');", true],
  // A handler's reply is typed by its operation, with no annotation at the call.
  ["export const handlers: Pick<RouteHandlers, 'getApiUser' | 'createApiUser'> = {", false],
  ["  getApiUser: () => (_request, reply) => sendBusinessError(reply, 409, 'RESOURCE_ALREADY_EXIST', 'Duplicated.'),", true],
  ["  createApiUser: () => (_request, reply) => sendBusinessError(reply, 409, 'RESOURCE_ALREADY_EXIST', 'Duplicated.'),", false],
  ['};', false],
  // An answer kept as a value (the account-holder check's test numbers) keeps each status with its own codes.
  ["import type { AccountHolderAnswer } from '../../sandbox/domain/outcomes.ts';", false],
  ["export const notRegistered: AccountHolderAnswer = { kind: 'error', httpStatus: 404, code: 'RESOURCE_NOT_FOUND', message: '' };", false],
  ["export const mismatched: AccountHolderAnswer = { kind: 'error', httpStatus: 404, code: 'NOT_ALLOWED', message: '' };", true],
];

const OPTIONS: ts.CompilerOptions = {
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  strict: true,
  noUncheckedIndexedAccess: true,
  allowImportingTsExtensions: true,
  resolveJsonModule: true,
  esModuleInterop: true,
  skipLibCheck: true,
  noEmit: true,
  types: ['node'],
  lib: ['lib.es2022.d.ts'],
};

/** The compiler's diagnostics on the snippet, by line (1-based), read from memory beside the real files it imports. */
function diagnosticsByLine(source: string): Map<number, string[]> {
  const host = ts.createCompilerHost(OPTIONS);
  const readFile = host.readFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  const getSourceFile = host.getSourceFile.bind(host);
  host.readFile = (file) => (file === SNIPPET_FILE ? source : readFile(file));
  host.fileExists = (file) => file === SNIPPET_FILE || fileExists(file);
  host.getSourceFile = (file, language, ...rest) =>
    file === SNIPPET_FILE ? ts.createSourceFile(file, source, language) : getSourceFile(file, language, ...rest);
  const program = ts.createProgram([SNIPPET_FILE], OPTIONS, host);
  const snippet = program.getSourceFile(SNIPPET_FILE)!;
  const lines = new Map<number, string[]>();
  for (const diagnostic of [...program.getSyntacticDiagnostics(snippet), ...program.getSemanticDiagnostics(snippet)]) {
    const line = snippet.getLineAndCharacterOfPosition(diagnostic.start ?? 0).line + 1;
    lines.set(line, [...(lines.get(line) ?? []), ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ')]);
  }
  return lines;
}

test('an undocumented status and code of a business error fails to compile, at its call; a documented one compiles', () => {
  const diagnostics = diagnosticsByLine(SNIPPET.map(([code]) => code).join('\n'));
  const refused = SNIPPET.flatMap(([code, isRefused], index) => (isRefused ? [`${index + 1}: ${code}`] : []));
  const diagnosed = [...diagnostics.keys()].sort((a, b) => a - b).map((line) => `${line}: ${SNIPPET[line - 1]?.[0]}`);
  assert.deepEqual(diagnosed, refused, `the compiler said: ${JSON.stringify(Object.fromEntries(diagnostics), null, 2)}`);
});
