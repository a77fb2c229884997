// k6 provides the Web Crypto API as a global; @types/k6 does not declare it.
declare const crypto: { randomUUID(): string };

/**
 * A UUID version 4 (RFC 9562), as X-Reference-Id must be. Web Crypto's randomUUID is native in k6: 40×
 * cheaper per call than building one from random bytes in JavaScript (measured in k6 1.8: 1.4 µs against
 * 56 µs), which matters at thousands of creations a second.
 */
export function uuidv4(): string {
  return crypto.randomUUID();
}
