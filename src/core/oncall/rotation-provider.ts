/**
 * The embedded rotation as an {@link OnCallProvider}: computed from the config, never waits, never
 * fails (a rotation the config check let through always names someone).
 */
import type { OnCallProvider } from '../../ports/oncall.js';
import { rotationAt, type Rotation } from './rotation.js';

/** A person of `oncall.people`, as the directory knows them. */
export interface DirectoryPerson {
  name: string;
  email?: string | undefined;
}

export function rotationProvider(rotations: Record<string, Rotation | undefined>, people: readonly DirectoryPerson[]): OnCallProvider {
  return {
    source: 'rotation',
    whoIsOnCall(q, now) {
      const r = rotations[q.route];
      if (!r) return Promise.resolve({ known: false, reason: 'no rotation for this route', source: 'rotation' });
      const shift = rotationAt(r, now);
      const known = people.find((p) => p.name.toLowerCase() === shift.person.toLowerCase());
      return Promise.resolve({
        known: true,
        people: [{ name: shift.person, ...(known?.email ? { email: known.email } : {}), chat: {} }],
        until: shift.until,
        source: 'rotation',
      });
    },
  };
}
