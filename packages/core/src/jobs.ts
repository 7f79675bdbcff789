import type { QueuedMessage } from './message.js';

/** A dispatch job: an admitted message and where it goes. */
export interface DispatchJobData extends QueuedMessage {
  provider: string;
  /** The receiver bucket's name (stats). */
  receiver: string;
  admittedAt: number;
  /** Temporary failures so far (throttles are not counted). */
  failures?: number;
}
