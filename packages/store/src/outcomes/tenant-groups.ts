import { SluiceError } from '@sluice/core';

/**
 * Consumer groups made over HTTP for one tenant (docs/design/tenants-and-keys.md, Outcomes over
 * HTTP) are named `tenant:<tenant>:<name>`: a backend's own group should not start so.
 */
export const TENANT_GROUP_PREFIX = 'tenant:';

/** What a tenant names its group over HTTP. */
const GROUP_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/** The most groups one tenant may have: each reads the whole fleet's stream. */
export const MAX_TENANT_GROUPS = 5;

/** The consumer group of tenant `tenantId` named `name`, or `invalid_argument` naming `path`. */
export function tenantGroup(tenantId: string, name: unknown, path = 'name'): string {
  if (typeof name !== 'string' || !GROUP_NAME.test(name)) {
    throw new SluiceError('invalid_argument', `${path}: must match [A-Za-z0-9_.-]{1,64}`, { path });
  }
  return `${TENANT_GROUP_PREFIX}${tenantId}:${name}`;
}

/** A tenant's group names, given every group's, without their prefix. */
export function tenantGroupNames(tenantId: string, groups: readonly string[]): string[] {
  const prefix = `${TENANT_GROUP_PREFIX}${tenantId}:`;
  return groups.filter((g) => g.startsWith(prefix)).map((g) => g.slice(prefix.length));
}

/**
 * Whether a group holds the stream's events for it (the settle pass trims nothing it has not
 * acknowledged). A backend's own group always does: it slows injection when it falls behind
 * rather than lose events. A tenant's does while it is at most `tenantHold` events behind
 * (`pending + lag`, from `XINFO GROUPS`; a lag Redis cannot tell counts as too far), so one
 * tenant's abandoned group can neither fill Redis nor hold every campaign's injection.
 */
export function holdsStream(group: { name: string; pending: number; lag: number | null }, tenantHold: number): boolean {
  if (!group.name.startsWith(TENANT_GROUP_PREFIX)) return true;
  return group.lag !== null && group.pending + group.lag <= tenantHold;
}
