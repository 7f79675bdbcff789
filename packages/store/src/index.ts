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
