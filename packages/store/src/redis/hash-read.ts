// A read of some fields of a Redis hash (one HMGET) that its owner's codec decodes as it would
// the whole hash (HGETALL): the codecs of the campaign hash and the message record make these.

/** The hash as HGETALL answers it (or an HMGET turned into one by {@link HashRead}). */
export type HashFields = Readonly<Record<string, string>>;

/** A read of some fields of a hash: HMGET `fields`, then `decode` its answer. */
export interface HashRead<T> {
  readonly fields: readonly string[];
  decode(values: readonly (string | null)[]): T;
}

/** A read whose decoder takes the hash as HGETALL would give it: HMGET's missing fields are left out. */
export function hashRead<T>(fields: readonly string[], decode: (h: HashFields) => T): HashRead<T> {
  return {
    fields,
    decode(values) {
      const h: Record<string, string> = {};
      fields.forEach((f, i) => {
        const v = values[i];
        if (v !== null && v !== undefined) h[f] = v;
      });
      return decode(h);
    },
  };
}
