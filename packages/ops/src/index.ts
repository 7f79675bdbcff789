export type { AuditEntry, Explanation, KeyStatus, Override, OverrideKind, QueueStatus, StatusSnapshot } from './types.js';
