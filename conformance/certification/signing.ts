import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

/**
 * Signed evidence: an in-toto Statement v1 whose subjects are every file of a bundle (manifest.json among them)
 * with its SHA-256, and whose predicate is the run's test result, signed with Ed25519 in a DSSE envelope
 * (https://github.com/secure-systems-lab/dsse). Signing the statement signs the manifest: its digest is a subject.
 * A reviewer who holds the signer's public key, got out of band, learns who made the bundle, not only that it is
 * whole.
 */

/** The envelope's place in a bundle, beside manifest.json; it is the one file the manifest does not list. */
export const ATTESTATION_FILE = 'attestation.dsse.json';
export const STATEMENT_TYPE = 'https://in-toto.io/Statement/v1';
export const TEST_RESULT_PREDICATE = 'https://in-toto.io/attestation/test-result/v0.1';
export const PAYLOAD_TYPE = 'application/vnd.in-toto+json';

export interface Subject {
  name: string;
  digest: { sha256: string };
}

/** The test-result predicate (in-toto attestation test-result v0.1): the requirements by verdict. */
export interface TestResult {
  result: 'PASSED' | 'WARNED' | 'FAILED';
  configuration: Subject[];
  passedTests: string[];
  warnedTests: string[];
  failedTests: string[];
}

export interface Statement {
  _type: typeof STATEMENT_TYPE;
  subject: Subject[];
  predicateType: typeof TEST_RESULT_PREDICATE;
  predicate: TestResult;
}

export interface Envelope {
  payloadType: string;
  payload: string;
  signatures: { keyid: string; sig: string }[];
}

/** A key file that cannot be used: missing, not PEM, not Ed25519, or the wrong half of the pair. */
export class KeyFileError extends Error {
  constructor(file: string, why: string) {
    super(`Cannot use the key file ${file}: ${why}`);
    this.name = 'KeyFileError';
  }
}

/** The key's id: the SHA-256 of its public key (SPKI, DER), as a reviewer compares it with the one they keep. */
export function keyIdOf(key: KeyObject): string {
  const publicKey = key.type === 'private' ? createPublicKey(key) : key;
  return `SHA256:${createHash('sha256')
    .update(publicKey.export({ type: 'spki', format: 'der' }))
    .digest('hex')}`;
}

/** An Ed25519 private key from a PEM file (as keygen writes it). */
export function readPrivateKey(file: string): KeyObject {
  return readKey(file, 'private');
}

/** An Ed25519 public key from a PEM file (as keygen writes it). */
export function readPublicKey(file: string): KeyObject {
  return readKey(file, 'public');
}

function readKey(file: string, half: 'private' | 'public'): KeyObject {
  if (!existsSync(file)) throw new KeyFileError(file, 'there is no such file');
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new KeyFileError(file, `it cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  if (half === 'public' && /PRIVATE KEY-----/.test(text))
    throw new KeyFileError(
      file,
      'it holds a private key; give the public key (keygen wrote it as <prefix>.pub.pem), and keep the private key to yourself',
    );
  if (half === 'private' && !/PRIVATE KEY-----/.test(text) && /PUBLIC KEY-----/.test(text))
    throw new KeyFileError(file, 'it holds a public key; signing needs the private key (keygen wrote it as <prefix>.key.pem)');
  let key: KeyObject;
  try {
    key = half === 'private' ? createPrivateKey({ key: text, format: 'pem' }) : createPublicKey({ key: text, format: 'pem' });
  } catch {
    throw new KeyFileError(file, `it is not a PEM ${half} key (momo-harness keygen makes one)`);
  }
  if (key.asymmetricKeyType !== 'ed25519')
    throw new KeyFileError(
      file,
      `it is a ${key.asymmetricKeyType ?? 'symmetric'} key; bundles are signed with Ed25519 (momo-harness keygen makes one)`,
    );
  return key;
}

/**
 * Writes a new key pair: <prefix>.key.pem (PKCS#8, readable by its owner only) and <prefix>.pub.pem (SPKI).
 * Refuses to overwrite either; returns the two paths and the key id.
 */
export function generateKeyFiles(prefix: string): { privateFile: string; publicFile: string; keyId: string } {
  const privateFile = `${prefix}.key.pem`;
  const publicFile = `${prefix}.pub.pem`;
  const present = [privateFile, publicFile].filter((file) => existsSync(file));
  if (present.length > 0)
    throw new KeyFileError(
      present[0]!,
      'it exists already, and a key is never overwritten; choose another --out <prefix>, or remove the old pair first',
    );
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  // 'wx': fails rather than replaces, should the file appear meanwhile.
  writeFileSync(privateFile, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600, flag: 'wx' });
  writeFileSync(publicFile, publicKey.export({ type: 'spki', format: 'pem' }), { mode: 0o644, flag: 'wx' });
  return { privateFile, publicFile, keyId: keyIdOf(publicKey) };
}

/** DSSE's pre-authentication encoding: what is signed, so that the payload type cannot be swapped. */
function pae(payloadType: string, payload: Buffer): Buffer {
  const type = Buffer.from(payloadType, 'utf8');
  return Buffer.concat([Buffer.from(`DSSEv1 ${type.length} `), type, Buffer.from(` ${payload.length} `), payload]);
}

export function statementOf(subject: Subject[], predicate: TestResult): Statement {
  return { _type: STATEMENT_TYPE, subject, predicateType: TEST_RESULT_PREDICATE, predicate };
}

/** The statement in a DSSE envelope signed with the private key, as the text of ATTESTATION_FILE. */
export function signStatement(statement: Statement, privateKey: KeyObject): string {
  const payload = Buffer.from(JSON.stringify(statement), 'utf8');
  const sig = sign(null, pae(PAYLOAD_TYPE, payload), privateKey);
  const envelope: Envelope = {
    payloadType: PAYLOAD_TYPE,
    payload: payload.toString('base64'),
    signatures: [{ keyid: keyIdOf(privateKey), sig: sig.toString('base64') }],
  };
  return `${JSON.stringify(envelope, null, 2)}\n`;
}

export type SignatureCheck = { valid: true; statement: Statement; keyId: string } | { valid: false; problem: string };

/**
 * Whether the envelope is signed by the public key, and what it states. Says which is wrong: not an envelope,
 * signed by another key than the one given (its key id names the signer), or a signature that claims the given
 * key but does not verify under it (the bundle was signed again by someone else, or the signature altered).
 */
export function openEnvelope(data: Buffer, publicKey: KeyObject): SignatureCheck {
  let envelope: Envelope;
  try {
    envelope = JSON.parse(data.toString('utf8')) as Envelope;
  } catch {
    return { valid: false, problem: `${ATTESTATION_FILE} is not JSON: not the DSSE envelope the harness writes` };
  }
  if (
    envelope?.payloadType !== PAYLOAD_TYPE ||
    typeof envelope.payload !== 'string' ||
    !Array.isArray(envelope.signatures) ||
    envelope.signatures.length === 0
  ) {
    return { valid: false, problem: `${ATTESTATION_FILE} is not a DSSE envelope of an in-toto statement` };
  }
  const expected = keyIdOf(publicKey);
  const payload = Buffer.from(envelope.payload, 'base64');
  const byKey = envelope.signatures.find((s) => s.keyid === expected);
  if (!byKey) {
    const named = envelope.signatures.map((s) => s.keyid).join(', ');
    return {
      valid: false,
      problem: `WRONG KEY or SIGNED BY ANOTHER KEY: the bundle is signed by ${named}, not by the key you gave (${expected}); with the signer's genuine public key, this is a bundle someone else signed`,
    };
  }
  if (!verify(null, pae(envelope.payloadType, payload), publicKey, Buffer.from(String(byKey.sig), 'base64'))) {
    return {
      valid: false,
      problem: `RE-SIGNED: the signature names your key (${expected}) but does not verify under it; the bundle was signed again with another key, or its signature or statement altered`,
    };
  }
  let statement: Statement;
  try {
    statement = JSON.parse(payload.toString('utf8')) as Statement;
  } catch {
    return { valid: false, problem: 'the signed payload is not JSON' };
  }
  if (statement._type !== STATEMENT_TYPE || statement.predicateType !== TEST_RESULT_PREDICATE || !Array.isArray(statement.subject)) {
    return { valid: false, problem: `the signed payload is not an in-toto Statement v1 with the test-result predicate` };
  }
  return { valid: true, statement, keyId: expected };
}

/**
 * What differs between the files of a bundle (path → SHA-256, the envelope left out) and the subjects of its
 * signed statement: each line names the file, and manifest.json by its own name.
 */
export function subjectProblems(statement: Statement, hashes: ReadonlyMap<string, string>): string[] {
  const problems: string[] = [];
  const signed = new Map(statement.subject.map((s) => [s.name, s.digest?.sha256]));
  for (const [name, digest] of signed) {
    const actual = hashes.get(name);
    if (actual === undefined) problems.push(`${name}: signed, but missing from the bundle (removed after signing)`);
    else if (actual !== digest)
      problems.push(
        name === 'manifest.json'
          ? 'manifest.json: TAMPERED MANIFEST, its SHA-256 is not the signed one (the manifest was rewritten after signing)'
          : `${name}: its SHA-256 is not the signed one (altered after signing)`,
      );
  }
  for (const name of hashes.keys()) if (!signed.has(name)) problems.push(`${name}: in the bundle but not signed (added after signing)`);
  return problems;
}
