import type { GovernorRule } from '@sluice/core';

/** What a matcher sees of an outcome that was not an acceptance. */
export interface MatchedReply {
  /** The reply verbatim: status, enhanced code and text. */
  reply: string;
  /** The classifier family (none for an ambiguous outcome). */
  family?: string | undefined;
  /** The RFC 3463 enhanced code the classifier found (`550 5.7.1 …` → `5.7.1`), if any. */
  enhanced?: string | undefined;
}

/**
 * The ids of the rules whose `match` a reply meets (every condition given must hold): the
 * worker counts each as the signal `matched:<id>`. Compiled once from the config.
 */
export function replyMatcher(rules: readonly GovernorRule[]): (reply: MatchedReply) => string[] {
  const matchers = rules.flatMap((rule) => {
    const m = rule.match;
    if (m === undefined) return [];
    const text = m.text === undefined ? undefined : new RegExp(m.text, 'i');
    const test = (r: MatchedReply): boolean => {
      if (m.families && (r.family === undefined || !m.families.includes(r.family))) return false;
      if (m.codes) {
        const code = r.enhanced;
        if (code === undefined || !m.codes.some((c) => code === c || code.startsWith(`${c}.`))) return false;
      }
      return text === undefined || text.test(r.reply);
    };
    return [{ id: rule.id, test }];
  });
  return (reply) => matchers.filter((m) => m.test(reply)).map((m) => m.id);
}
