// Message tables: one entry per message type, from which its type, the check of what arrives and its route come.
// Written by hand (a few field checkers): a schema library would outweigh the protocol it checks.

/** Thrown by a field checker: the message is refused, with this reason for the log. */
export class Refused extends Error {}

/**
 * Checks one field of an untrusted message: `value` as received, `name` the field's name (for the reason), `message`
 * the whole message (for a field that depends on another, checked before it). Gives the value as the protocol types
 * it, or throws Refused; `undefined` leaves the field out (the message's type makes it optional).
 */
export type Field<T> = (value: unknown, name: string, message: Readonly<Record<string, unknown>>) => T;

/** A table of messages checked on arrival: each type's fields, in the order they are checked. */
export type FieldTable = Readonly<Record<string, Readonly<Record<string, Field<unknown>>>>>;

type ValueOf<F> = F extends Field<infer T> ? T : never;
type Flat<T> = { [K in keyof T]: T[K] } & {};
type RequiredFields<F> = { [N in keyof F as undefined extends ValueOf<F[N]> ? never : N]: ValueOf<F[N]> };
type OptionalFields<F> = { [N in keyof F as undefined extends ValueOf<F[N]> ? N : never]?: Exclude<ValueOf<F[N]>, undefined> };

/** The union of the messages a table of payload types describes: `{ type, ...payload }` for each entry. */
export type MessageUnion<T> = { [K in keyof T & string]: Flat<{ type: K } & T[K]> }[keyof T & string];

/** The union of the messages a FieldTable checks, each with its fields typed as its checkers give them. */
export type CheckedMessages<T extends FieldTable> = MessageUnion<{ [K in keyof T]: RequiredFields<T[K]> & OptionalFields<T[K]> }>;

/** A message's payload type with no fields. */
export type NoFields = Record<never, never>;

/** What checking one message gave: the typed message, or why it was refused. */
export type Checked<M> = { ok: true; message: M } | { ok: false; reason: string };

/**
 * Checks an untrusted message against `table`: an object whose `type` is one of the table's, with every field its
 * entry declares passing that field's check. Fields the entry does not declare are dropped, never passed on.
 */
export function checkMessage<T extends FieldTable>(table: T, raw: unknown): Checked<CheckedMessages<T>> {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return refused('not an object');
  const m = raw as Record<string, unknown>;
  const type = m.type;
  if (typeof type !== 'string') return refused('no type');
  if (!Object.hasOwn(table, type)) return refused(`unknown message type ${JSON.stringify(type.slice(0, 40))}`);
  const message: Record<string, unknown> = { type };
  try {
    for (const [name, field] of Object.entries(table[type])) {
      const value = field(m[name], name, m);
      if (value !== undefined) message[name] = value;
    }
  } catch (e) {
    if (e instanceof Refused) return refused(e.message);
    throw e;
  }
  return { ok: true, message: message as CheckedMessages<T> };
}

function refused(reason: string): { ok: false; reason: string } {
  return { ok: false, reason };
}

/** Refuses the message being checked, for `reason`. */
export function refuse(reason: string): never {
  throw new Refused(reason);
}

/** One route per message type, given the message and a context: a table that misses a type does not compile. */
export type Routes<M extends { type: string }, C = void, R = void> = {
  readonly [K in M['type']]: (message: Extract<M, { type: K }>, context: C) => R;
};

/** Calls the route of `message`'s type; a type the table has no route of calls nothing and gives `undefined`. */
export function routeMessage<M extends { type: string }, C, R>(routes: Routes<M, C, R>, message: M, context: C): R | undefined {
  if (!Object.hasOwn(routes, message.type)) return undefined;
  // The compiler cannot tie the route's parameter to the message's own type: the lookup by its `type` does.
  const route = routes[message.type as M['type']] as (message: M, context: C) => R;
  return route(message, context);
}
