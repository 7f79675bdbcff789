/** Priority classes, most urgent first. The order is the order of service. */
export const PRIORITY_CLASSES = ['critical', 'high', 'normal', 'low'] as const;

/** A priority class: `critical` (OTP, reset), `high` (receipts), `normal` (product mail), `low` (newsletters). */
export type PriorityClass = (typeof PRIORITY_CLASSES)[number];
