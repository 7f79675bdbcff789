import type { QueuedMessage } from './message.js';

/** An intake or campaign job: the message, plus the slot it booked on an earlier pass. */
export interface IntakeJobData extends QueuedMessage {
  /** `at`: epoch ms of the booked slot; `paid`: layers charged for it (limiter bitmask). */
  booking?: { at: number; paid: number } | undefined;
}

/** A dispatch job: an admitted message and where it goes. */
export interface DispatchJobData extends QueuedMessage {
  provider: string;
  /** The receiver bucket's name (stats). */
  receiver: string;
  admittedAt: number;
  /** Temporary failures so far (throttles are not counted). */
  failures?: number;
}
