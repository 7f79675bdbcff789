export {
  createStore,
  type Store,
  type StoreOptions,
  type MessageRecord,
  type OutcomeDetails,
  type AttemptEntry,
  type TransitionResult,
} from './store.js';
export { messageId } from './ids.js';
export {
  SUPPRESSION_SOURCES,
  createSuppressions,
  decodeSuppression,
  encodeSuppression,
  type SuppressionEntry,
  type SuppressionPage,
  type SuppressionSource,
  type Suppressions,
  type SuppressionsOptions,
} from './suppressions.js';
export { createFeedback, type ApplyResult, type Feedback, type FeedbackOptions } from './feedback.js';
export { createQueues, type Queues, type QueuesOptions } from './queues.js';
