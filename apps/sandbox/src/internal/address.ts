/** The bare address of `"Name" <a@b.com>` or `a@b.com`, lower-cased. */
export function bareAddress(value: string): string {
  const angle = /<([^<>]*)>\s*$/.exec(value);
  return (angle?.[1] ?? value).trim().toLowerCase();
}

/** The domain part of an address (after the last `@`), lower-cased; `''` if there is none. */
export function domainOf(value: string): string {
  const address = bareAddress(value);
  const at = address.lastIndexOf('@');
  return at === -1 ? '' : address.slice(at + 1);
}

/** True when `value` names a mailbox with a local part and a domain. */
export function isAddress(value: string): boolean {
  const address = bareAddress(value);
  const at = address.lastIndexOf('@');
  return at > 0 && at < address.length - 1;
}

/** A case-insensitive matcher for an exact address or a glob where `*` matches any run. */
export function compileAddressPattern(pattern: string): (address: string) => boolean {
  const lowered = pattern.trim().toLowerCase();
  if (!lowered.includes('*')) return (address) => address === lowered;
  const source = lowered
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  const regex = new RegExp(`^${source}$`, 's');
  return (address) => regex.test(address);
}
