/**
 * Finding secrets however a text writes them. A hostile target can echo a key back hex-encoded, base64- or
 * base64url-encoded at any offset of a longer value, URL-encoded, JSON-escaped or wrapped over several lines;
 * a report then carries it in that form, escaped once more for each JSON layer it passes through. The finder
 * sees a text through those wrappings, searches what it sees for every encoding of every secret in one pass,
 * and says where each sighting is written and how (never what it is).
 */

/** How the bytes of a secret are written. */
export type Encoding = 'plain' | 'hex' | 'base64' | 'base64url';

/** One secret, found: which one (its index among those the finder was made with), how it was written, and where. */
export interface Sighting {
  secret: number;
  /** In words, e.g. "in the clear", "base64-encoded, split across lines". */
  encoding: string;
  start: number;
  end: number;
}

/** The strings that stand for a secret in one encoding, before any wrapping. */
export function formsOf(secret: string): { encoding: Encoding; text: string }[] {
  const bytes = Buffer.from(secret, 'utf8');
  const hex = bytes.toString('hex');
  const forms: { encoding: Encoding; text: string }[] = [
    { encoding: 'plain', text: secret },
    { encoding: 'hex', text: hex },
  ];
  if (hex.toUpperCase() !== hex) forms.push({ encoding: 'hex', text: hex.toUpperCase() });
  for (const offset of [0, 1, 2]) {
    const base64 = base64Middle(bytes, offset);
    const base64url = base64.replace(/\+/g, '-').replace(/\//g, '_');
    forms.push({ encoding: 'base64', text: base64 });
    if (base64url !== base64) forms.push({ encoding: 'base64url', text: base64url });
  }
  return forms;
}

/**
 * Base64 writes 3 bytes as 4 characters, so the bytes of a secret inside a longer value come out differently
 * for each of the 3 offsets they can start at, and the characters at either end also hold bits of the bytes
 * around them. What is left, for one offset, is the middle that the secret's bytes alone decide.
 */
function base64Middle(bytes: Buffer, offset: number): string {
  const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64');
  // Character i holds bits 6i to 6i+6 of what was encoded; keep those wholly inside the secret's bits.
  return encoded.slice(Math.ceil((8 * offset) / 6), Math.floor((8 * (offset + bytes.length)) / 6));
}

// What a text can wrap an encoded secret in, each seen through as the character it stands for (or nothing):
// line breaks, raw or escaped as \n or \r in JSON at any depth; JSON's \uXXXX and \/ at any depth; and
// URL-encoding of ASCII characters. Line breaks may also cut an escape, as wrapping at a column does.
// '+' for a space is a form of its own (formsOf's text with '+'). Every repetition is bounded or can match
// a text in one way only, so that no text (a hostile target's above all) makes the search backtrack without end.
const BREAKS = String.raw`(?:[\r\n]|\\{1,8}[nr]){0,8}`;
// The backslashes of an escape: doubled by each JSON it passes through (up to 8, three times), perhaps cut
// by raw line breaks.
const BACKSLASHES = String.raw`\\(?:[\r\n]{0,8}\\){0,7}`;
const JSON_ESCAPE = String.raw`${BACKSLASHES}${BREAKS}(?:\/|u(?:${BREAKS}[0-9a-fA-F]){4})`;
const URL_ESCAPE = `%${BREAKS}[0-7]${BREAKS}[0-9a-fA-F]`;
// An escape is tried once per run of backslashes, at its start (a run of any length costs little), and
// before an escaped line break, so that "\\\nu0041" can be a \u escape cut by one.
const WRAPPING = new RegExp(String.raw`[\r\n]+|(?<!\\)${JSON_ESCAPE}|\\{1,8}[nr]|${URL_ESCAPE}`, 'g');
const BREAK = /[\r\n]|\\+[nr]/g;

const [LF, CR, N, R, SLASH, PERCENT] = ['\n', '\r', 'n', 'r', '/', '%'].map((c) => c.charCodeAt(0)) as [
  number,
  number,
  number,
  number,
  number,
  number,
];

/** The character a wrapping stands for, or nothing for a line break (raw, escaped or encoded). */
function seenThrough(wrapping: string): string {
  const first = wrapping.charCodeAt(0);
  const last = wrapping.charCodeAt(wrapping.length - 1);
  if (first === LF || first === CR || last === N || last === R) return '';
  if (last === SLASH) return '/';
  const digits = wrapping.slice(first === PERCENT ? 1 : wrapping.indexOf('u') + 1).replace(BREAK, '');
  const code = parseInt(digits, 16);
  return code === LF || code === CR ? '' : String.fromCharCode(code);
}

/** A text seen through its wrappings, and the way back from a span of what is seen to the span written. */
class Unwrapped {
  readonly text: string;
  // One entry per wrapping seen through: where it is written, and where what it stands for (0 or 1 character) is.
  private readonly writtenStart: number[] = [];
  private readonly writtenEnd: number[] = [];
  private readonly seenStart: number[] = [];
  private readonly seenEnd: number[] = [];
  /**
   * Each "\n" or "\r" taken for an escaped line break: it may instead be a backslash before a secret that
   * starts with n or r. Where its letter is written, and where the seen text goes on after it.
   */
  readonly escapedLineBreaks: { letter: string; written: number; seen: number }[] = [];

  constructor(written: string) {
    let dropped = 0;
    this.text = written.replace(WRAPPING, (wrapping: string, at: number) => {
      const seen = seenThrough(wrapping);
      this.writtenStart.push(at);
      this.writtenEnd.push(at + wrapping.length);
      this.seenStart.push(at - dropped);
      this.seenEnd.push(at - dropped + seen.length);
      const last = wrapping.charCodeAt(wrapping.length - 1);
      if (last === N || last === R)
        this.escapedLineBreaks.push({ letter: wrapping[wrapping.length - 1]!, written: at + wrapping.length - 1, seen: at - dropped });
      dropped += wrapping.length - seen.length;
      return seen;
    });
  }

  /** Where the characters [start, end) of the seen text are written: whole wrappings, no line break at either end. */
  writtenSpan(start: number, end: number): [number, number] {
    return [this.writtenStartOf(start), this.writtenEndOf(end - 1)];
  }

  private writtenStartOf(char: number): number {
    const before = this.lastWrappingEndingBy(char);
    const next = before + 1;
    if (next < this.seenStart.length && this.seenStart[next] === char && this.seenEnd[next] === char + 1) return this.writtenStart[next]!;
    return before < 0 ? char : char + this.writtenEnd[before]! - this.seenEnd[before]!;
  }

  private writtenEndOf(char: number): number {
    const before = this.lastWrappingEndingBy(char);
    const next = before + 1;
    if (next < this.seenStart.length && this.seenStart[next] === char && this.seenEnd[next] === char + 1) return this.writtenEnd[next]!;
    return (before < 0 ? char : char + this.writtenEnd[before]! - this.seenEnd[before]!) + 1;
  }

  /** The last wrapping whose seen part ends at or before a character, or -1. */
  private lastWrappingEndingBy(char: number): number {
    let low = 0;
    let high = this.seenEnd.length - 1;
    let found = -1;
    while (low <= high) {
      const middle = (low + high) >> 1;
      if (this.seenEnd[middle]! <= char) {
        found = middle;
        low = middle + 1;
      } else {
        high = middle - 1;
      }
    }
    return found;
  }
}

interface Form {
  secret: number;
  encoding: Encoding;
  /** The plain form with '+' for each space, as a URL's query writes it. */
  plusForSpace: boolean;
}

/**
 * Every encoding of a set of secrets, searched for together. At each position of a text a rolling hash of the
 * next few characters is checked against those that begin a form, so a text is read once however many secrets
 * there are: a run that provisions a hundred API users searches for a thousand forms. (One regular expression
 * of them all is as fast for a handful, and twenty times slower for a thousand.)
 */
export class SecretFinder {
  private readonly formsByText = new Map<string, Form[]>();
  // How many characters the hash covers: those of the shortest form, at most HASHED.
  private readonly width: number;
  private readonly textsByHash = new Map<number, string[]>();
  // One byte per bucket of hashes, so that almost every position is ruled out without a look into the map.
  private readonly buckets = new Uint8Array(BUCKETS);
  private readonly outgoingFactor: number;
  // The forms that begin with n or r, by that letter: what an escaped line break may have hidden.
  private readonly textsByFirstLetter = new Map<string, string[]>();

  constructor(secrets: readonly string[]) {
    secrets.forEach((secret, index) => {
      const forms = formsOf(secret).map((form) => ({ ...form, plusForSpace: false }));
      if (secret.includes(' ')) forms.push({ encoding: 'plain', text: secret.replace(/ /g, '+'), plusForSpace: true });
      for (const { text, ...form } of forms) {
        const known = this.formsByText.get(text) ?? [];
        known.push({ secret: index, ...form });
        this.formsByText.set(text, known);
      }
    });
    const texts = [...this.formsByText.keys()];
    this.width = Math.min(HASHED, ...texts.map((text) => text.length));
    this.outgoingFactor = power(BASE, this.width - 1);
    for (const text of texts) {
      const hash = hashOf(text, 0, this.width);
      this.textsByHash.set(hash, [...(this.textsByHash.get(hash) ?? []), text]);
      this.buckets[bucketOf(hash)] = 1;
      if (text[0] === 'n' || text[0] === 'r') this.textsByFirstLetter.set(text[0], [...(this.textsByFirstLetter.get(text[0]) ?? []), text]);
    }
  }

  /** Every sighting of a secret in a text, overlapping ones included, with the span as written. */
  find(written: string): Sighting[] {
    if (this.formsByText.size === 0) return [];
    const sightings: Sighting[] = [];
    const unwrapped = new Unwrapped(written);
    this.search(unwrapped.text, (start, end, form) => {
      const [writtenStart, writtenEnd] = unwrapped.writtenSpan(start, end);
      sightings.push({
        secret: form.secret,
        encoding: describe(form, written.slice(writtenStart, writtenEnd)),
        start: writtenStart,
        end: writtenEnd,
      });
    });
    for (const { letter, written: letterAt, seen } of unwrapped.escapedLineBreaks) {
      for (const text of this.textsByFirstLetter.get(letter) ?? []) {
        if (!unwrapped.text.startsWith(text.slice(1), seen)) continue;
        const end = text.length > 1 ? unwrapped.writtenSpan(seen, seen + text.length - 1)[1] : letterAt + 1;
        for (const form of this.formsByText.get(text)!)
          sightings.push({ secret: form.secret, encoding: describe(form, written.slice(letterAt, end)), start: letterAt, end });
      }
    }
    return sightings;
  }

  private search(text: string, found: (start: number, end: number, form: Form) => void): void {
    const { width, buckets, outgoingFactor } = this;
    if (text.length < width) return;
    let hash = hashOf(text, 0, width);
    for (let at = 0; ; at++) {
      if (buckets[bucketOf(hash)] === 1) {
        for (const candidate of this.textsByHash.get(hash) ?? []) {
          if (text.startsWith(candidate, at)) for (const form of this.formsByText.get(candidate)!) found(at, at + candidate.length, form);
        }
      }
      if (at + width >= text.length) return;
      hash = (Math.imul(hash - Math.imul(text.charCodeAt(at), outgoingFactor), BASE) + text.charCodeAt(at + width)) | 0;
    }
  }
}

const HASHED = 12;
const BASE = 0x01000193;
const BUCKETS = 1 << 16;

/** A polynomial hash of `width` characters from `start`, modulo 2^32, as the search rolls it along a text. */
function hashOf(text: string, start: number, width: number): number {
  let hash = 0;
  for (let i = start; i < start + width; i++) hash = (Math.imul(hash, BASE) + text.charCodeAt(i)) | 0;
  return hash;
}

function power(base: number, exponent: number): number {
  let result = 1;
  for (let i = 0; i < exponent; i++) result = Math.imul(result, base);
  return result;
}

function bucketOf(hash: number): number {
  return (hash ^ (hash >>> 16)) & (BUCKETS - 1);
}

const HAS_URL_ESCAPE = new RegExp(URL_ESCAPE);
const HAS_JSON_ESCAPE = new RegExp(JSON_ESCAPE);
const HAS_BREAK = new RegExp(BREAK.source);

function describe(form: Form, written: string): string {
  const how = form.encoding === 'plain' ? [] : [`${form.encoding}-encoded`];
  if (form.plusForSpace || HAS_URL_ESCAPE.test(written)) how.push('URL-encoded');
  if (HAS_JSON_ESCAPE.test(written)) how.push('JSON-escaped');
  if (HAS_BREAK.test(written)) how.push('split across lines');
  return how.length === 0 ? 'in the clear' : how.join(', ');
}
