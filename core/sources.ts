import type { ProfileName } from './profiles.ts';

/**
 * Where an expectation of the harness comes from, and so how much it may weigh:
 * - spec: a clause of momo-api-spec.md says so. Definite: it fails a target in every profile.
 * - observed: the live MTN sandbox was seen (or its provider documents it) to do so, in real-api-notes.md, where
 *   the spec says "not shown" or says otherwise. It fails a target only in the mtn-sandbox profile; in the spec
 *   profile it is a warning that the target differs from the live service.
 * - reading: the spec leaves the point open and this is how we read it (or a standard we apply to it, such as an
 *   RFC the spec does not name). At most a warning, unless the run is --strict.
 * A check that only informs (an unknown field of a record, under --strict) is advisory: a warning whatever the run.
 */
export type Source = { kind: 'spec'; clause: string } | { kind: 'observed'; note: string } | { kind: 'reading'; reading: string };

export type SourceKind = Source['kind'];

/**
 * A definite source: a clause of the spec that says so. A clause that says "not shown", or a live observation, can
 * never make a finding definite: such a source is refused where it is written, so no check can rest on one.
 */
export const spec = (clause: string): Source => {
  const problem = indefinite(clause);
  if (problem)
    throw new Error(`A definite source cannot rest on ${problem}: ${JSON.stringify(clause)}. Cite it as observed() or reading().`);
  return { kind: 'spec', clause };
};

/** Why a clause cited as definite is not: it quotes "not shown", or it cites the live notes. Undefined when it is definite. */
export function indefinite(clause: string): string | undefined {
  if (/not shown/i.test(clause)) return 'what the spec says is "not shown"';
  if (/real-api-notes|\[(observed|documented|uncertain)\]|live (sandbox|service)/i.test(clause)) return 'the live notes';
  return undefined;
}
export const observed = (note: string): Source => ({ kind: 'observed', note });
export const reading = (why: string): Source => ({ kind: 'reading', reading: why });

/** How one finding weighs on a run: it fails the scenario, or it is reported apart and changes no verdict. */
export type Severity = 'failure' | 'warning';

export interface RunStrictness {
  profile: ProfileName;
  strict: boolean;
}

/** The one rule that turns a finding's source into its weight: definite fails, observed fails on mtn-sandbox, a reading only under --strict. */
export function severityOf(source: Source, run: RunStrictness, options: { advisory?: boolean } = {}): Severity {
  if (options.advisory) return 'warning';
  switch (source.kind) {
    case 'spec':
      return 'failure';
    case 'observed':
      return run.profile === 'mtn-sandbox' ? 'failure' : 'warning';
    case 'reading':
      return run.strict ? 'failure' : 'warning';
  }
}

/**
 * Of the sources an expectation rests on (its expected value, its check's rule, its premises), the one it weighs as
 * much as in this run: the first, in the order given, that weighs as a warning; the first of all when every one
 * weighs as a failure. A finding is no stronger than the weakest source under it.
 */
export function weakest(sources: readonly Source[], run: RunStrictness): Source {
  if (sources.length === 0) throw new Error('weakest() of no source');
  return sources.find((s) => severityOf(s, run) === 'warning') ?? sources[0]!;
}

/** "definite: §7 rule 1", "observed: real-api-notes, …", "reading: …": how a report names a source. */
export function describeSource(source: Source): string {
  switch (source.kind) {
    case 'spec':
      return `definite: ${source.clause}`;
    case 'observed':
      return `observed: ${source.note}`;
    case 'reading':
      return `reading: ${source.reading}`;
  }
}

/** Why a finding of this source weighs as it does in this run, in a few words a reader of a failure or a warning needs. */
export function weightOf(source: Source, run: RunStrictness, severity: Severity): string {
  if (source.kind === 'observed') {
    return severity === 'failure'
      ? 'fails in the mtn-sandbox profile'
      : 'a warning in the spec profile: the live service does so, the spec does not say';
  }
  if (source.kind === 'reading') {
    return severity === 'failure'
      ? run.strict
        ? 'a failure because the run is --strict'
        : 'a failure'
      : 'a warning: the spec leaves this open (--strict makes it a failure)';
  }
  return 'fails in every profile';
}
