import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

/** A secret found in a report: where, and what kind; never the secret itself. */
export interface Leak {
  file: string;
  kind: string;
}

// Credentials recognisable by their shape, whoever issued them.
const SHAPES: { kind: string; pattern: RegExp }[] = [
  { kind: 'a JWT (access or consent token)', pattern: /eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/ },
  { kind: 'a Basic credential', pattern: /Basic\s+(?!\[REDACTED\])[A-Za-z0-9+/]{16,}={0,2}/ },
  { kind: 'an apiKey value', pattern: /\\?"apiKey\\?"\s*:\s*\\?"(?!\[REDACTED\])[^"\\]{8,}/ },
  { kind: 'a refresh_token value', pattern: /\\?"refresh_token\\?"\s*:\s*\\?"(?!\[REDACTED\])[^"\\]{8,}/ },
];

const MAX_FILE_BYTES = 64 * 1024 * 1024;

/**
 * Reads every file under a reports folder for the secrets the run was configured with (subscription keys,
 * API keys) and for credentials by their shape. A run whose reports hold one must not be shared: the
 * runner fails it.
 */
export function scanForSecrets(dir: string, secrets: readonly string[]): Leak[] {
  const leaks: Leak[] = [];
  for (const file of filesUnder(dir)) {
    if (statSync(file).size > MAX_FILE_BYTES) continue;
    leaks.push(...secretsIn(relative(dir, file), readFileSync(file, 'utf8'), secrets));
  }
  return leaks;
}

/** The secrets in one text, which `where` names in what is found. */
export function secretsIn(where: string, text: string, secrets: readonly string[]): Leak[] {
  const leaks: Leak[] = [];
  secrets.filter((s) => s.length >= 6).forEach((secret, i) => {
    if (text.includes(secret) || text.includes(Buffer.from(secret).toString('base64'))) leaks.push({ file: where, kind: `configured secret #${i + 1}` });
  });
  for (const { kind, pattern } of SHAPES) if (pattern.test(text)) leaks.push({ file: where, kind });
  return leaks;
}

/** Every regular file under a folder, at any depth. */
export function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...filesUnder(path));
    else if (entry.isFile()) out.push(path);
  }
  return out;
}
