/** What SDKs put on an error that never got an answer: a code and a message. */
interface ErrorLike {
  name?: unknown;
  code?: unknown;
  message?: unknown;
  cause?: unknown;
}

/** Error codes meaning "no answer" (Node net/dns, axios, nodemailer connection codes). */
const NO_ANSWER_CODE = /^(E[A-Z]+|ERR_[A-Z_]+)$/;

/** Whether a code names a failure to get any answer (ECONNREFUSED, ECONNABORTED, ETIMEDOUT…). */
export function isNoAnswerCode(code: unknown): boolean {
  return typeof code === 'string' && NO_ANSWER_CODE.test(code);
}

/** `CODE: message` of an error without a response, for the attempt log. */
export function errorText(error: unknown): string {
  if (typeof error !== 'object' || error === null) return String(error);
  const err = error as ErrorLike;
  const cause = (typeof err.cause === 'object' && err.cause !== null ? err.cause : {}) as ErrorLike;
  const code = typeof err.code === 'string' ? err.code : typeof cause.code === 'string' ? cause.code : undefined;
  const name = typeof err.name === 'string' && err.name !== 'Error' ? err.name : undefined;
  const message =
    typeof err.message === 'string' && err.message !== '' ? err.message : Object.prototype.toString.call(error);
  const label = [name, code].filter((s) => s !== undefined && !message.includes(s)).join(' ');
  return label ? `${label}: ${message}` : message;
}
