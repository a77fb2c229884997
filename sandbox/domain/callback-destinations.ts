import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/**
 * Where callbacks may go (docs/callbacks.md). Whoever holds an API user names the host of its callbacks, so
 * without a rule the sandbox would send requests for them anywhere it can reach: the cloud's metadata service
 * (credentials of the machine it runs on) above all.
 *
 * - Always refused, whatever --callback-hosts says: link-local addresses (169.254.0.0/16, fe80::/10), where the
 *   metadata services of AWS, GCP and Azure answer, AWS's IPv6 one (fd00:ec2::254), GCP's names for it, and the
 *   unspecified addresses (0.0.0.0/8, ::), which reach the sandbox's own machine.
 * - --callback-hosts any (the default): every other host, loopback and private networks included, because
 *   local development and the conformance run receive callbacks on 127.0.0.1.
 * - --callback-hosts a list: only host names on it (exactly, or under a "*." suffix) and addresses inside its
 *   addresses and CIDR ranges.
 *
 * A host name is checked when the callback URL is given, and each address it resolves to when the callback is
 * sent, so a name that later resolves to a refused address (DNS rebinding) reaches nothing.
 */

const ALWAYS_REFUSED_NAMES = ['metadata.google.internal', 'metadata.goog', 'metadata'];

const ALWAYS_REFUSED = new BlockList();
ALWAYS_REFUSED.addSubnet('169.254.0.0', 16, 'ipv4');
ALWAYS_REFUSED.addSubnet('0.0.0.0', 8, 'ipv4');
ALWAYS_REFUSED.addSubnet('fe80::', 10, 'ipv6');
ALWAYS_REFUSED.addAddress('fd00:ec2::254', 'ipv6');
ALWAYS_REFUSED.addAddress('::', 'ipv6');
// The metadata address through NAT64, which some IPv6-only networks route to it.
ALWAYS_REFUSED.addSubnet('64:ff9b::a9fe:0', 112, 'ipv6');

/** What --callback-hosts lists: host names (with "*." for a suffix), IP addresses and CIDR ranges. */
export type CallbackHostRule = { name: string } | { suffix: string } | { address: string; prefix: number; family: 'ipv4' | 'ipv6' };

/** Parses one entry of --callback-hosts; a string saying what is wrong when it is none of the three. */
export function parseCallbackHostRule(entry: string): CallbackHostRule | string {
  const cidr = /^([^/]+)\/(\d{1,3})$/.exec(entry);
  const address = cidr ? cidr[1]! : entry;
  const version = isIP(address);
  if (version !== 0) {
    const max = version === 4 ? 32 : 128;
    const prefix = cidr ? Number(cidr[2]) : max;
    if (prefix > max) return `"${entry}" has a prefix longer than ${max}`;
    return { address, prefix, family: version === 4 ? 'ipv4' : 'ipv6' };
  }
  if (cidr) return `"${entry}" is not a CIDR range such as 10.0.0.0/8`;
  const name = normalName(entry);
  const label = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?';
  if (name.startsWith('*.') && new RegExp(`^(?:${label}\\.)*${label}$`).test(name.slice(2))) return { suffix: name.slice(1) };
  if (new RegExp(`^(?:${label}\\.)*${label}$`).test(name)) return { name };
  return `"${entry}" is not a host name, an IP address or a CIDR range`;
}

export class CallbackDestinations {
  private readonly names = new Set<string>();
  private readonly suffixes: string[] = [];
  private readonly addresses = new BlockList();

  /** `any`, or the rules of --callback-hosts. */
  constructor(readonly rules: 'any' | readonly CallbackHostRule[]) {
    if (rules === 'any') return;
    for (const rule of rules) {
      if ('name' in rule) this.names.add(rule.name);
      else if ('suffix' in rule) this.suffixes.push(rule.suffix);
      else this.addresses.addSubnet(rule.address, rule.prefix, rule.family);
    }
  }

  /** Why a callback URL is refused, or undefined: its host by name or literal address, before anything is sent. */
  refusalOfUrl(url: string): string | undefined {
    let hostname: string;
    try {
      hostname = new URL(url).hostname;
    } catch {
      return 'it is not a URL';
    }
    // URL gives an IPv6 host in brackets, and has already turned 2852039166 or 0xA9FEA9FE into 169.254.169.254.
    const host = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
    if (isIP(host) !== 0) {
      const refusal = this.refusalOfAddress(host);
      if (refusal || this.rules === 'any' || this.addresses.check(host, familyOf(host))) return refusal;
      return `${host} is not inside the addresses --callback-hosts allows`;
    }
    const name = normalName(host);
    if (ALWAYS_REFUSED_NAMES.includes(name)) return `${name} is a cloud metadata service`;
    if (this.rules === 'any' || this.names.has(name) || this.suffixes.some((s) => name.endsWith(s))) return undefined;
    return `${name} is not among the hosts --callback-hosts allows`;
  }

  /** Why an address is refused whatever --callback-hosts says, or undefined: what a resolved name is held to. */
  refusalOfAddress(address: string): string | undefined {
    return ALWAYS_REFUSED.check(address, familyOf(address))
      ? `${address} is link-local, a cloud metadata address or unspecified`
      : undefined;
  }

  /**
   * dns.lookup as undici's connector calls it, refusing a name any of whose addresses is refused: the check at
   * send time, on the addresses the connection will use.
   */
  readonly lookup: LookupFunction = (hostname, options, callback) => {
    this.resolve(hostname, { ...options, all: true }, (error, list) => {
      if (error) return callback(error, '');
      if (list.length === 0) return callback(Object.assign(new Error(`${hostname} resolves to no address`), { code: 'ENOTFOUND' }), '');
      const refused = list.map((a) => this.refusalOfAddress(a.address)).find((r) => r !== undefined);
      if (refused)
        return callback(
          Object.assign(new Error(`callback destination refused: ${hostname} resolves to ${refused}`), { code: 'MOMO_CALLBACK_REFUSED' }),
          '',
        );
      if (options.all) return callback(null, list);
      return callback(null, list[0]!.address, list[0]!.family);
    });
  };

  /** The resolver behind `lookup`: the system's, unless a test gives its own. */
  resolve: (
    hostname: string,
    options: LookupAllOptions,
    callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
  ) => void = dnsLookup;
}

function familyOf(address: string): 'ipv4' | 'ipv6' {
  return isIP(address) === 6 ? 'ipv6' : 'ipv4';
}

function normalName(name: string): string {
  return name.toLowerCase().replace(/\.$/, '');
}
