import { readFileSync, statSync } from 'node:fs';

/**
 * A file the user names (a baseline, a summary, a history) is read whole only up to a bound: a wrong path can
 * name a disk image or a log of gigabytes, which would take the run's memory before any check could say no.
 */
export class FileTooLargeError extends Error {
  constructor(
    readonly bytes: number,
    readonly maxBytes: number,
  ) {
    super(`it is ${mib(bytes)}, more than the ${mib(maxBytes)} such a file can be`);
    this.name = 'FileTooLargeError';
  }
}

/** The file as UTF-8 text, or FileTooLargeError when it is larger than maxBytes; fs errors pass through. */
export function readTextWithin(file: string, maxBytes: number): string {
  const { size } = statSync(file);
  if (size > maxBytes) throw new FileTooLargeError(size, maxBytes);
  return readFileSync(file, 'utf8');
}

function mib(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}
