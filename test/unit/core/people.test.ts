import { describe, expect, it } from 'vitest';
import {
  cleanName,
  MAX_NAME,
  namesInText,
  peopleIn,
  peopleList,
  peopleMentioned,
  personFromKey,
  personKey,
  personLabel,
  withNames,
} from '../../../src/core/people.js';
import type { NoticeView } from '../../../src/core/chat/thread-view.js';

const names = (m: Record<string, string>) => ({ nameOf: (p: { via: string; id: string }) => m[personKey(p)] });

describe('people (one person, one way per surface)', () => {
  it('a ledger user and a person are the same thing both ways', () => {
    for (const p of [
      { via: 'slack', id: 'U0ANN' },
      { via: 'matrix', id: '@ann:example.org' },
      { via: 'cli', id: 'ann' },
      { via: 'pagerduty', id: 'PXYZ' },
    ])
      expect(personFromKey(personKey(p), p.via)).toEqual(p);
    expect(personFromKey('slack:U0ANN')).toEqual({ via: 'slack', id: 'U0ANN' });
    expect(personFromKey('matrix:@ann:example.org')).toEqual({ via: 'matrix', id: '@ann:example.org' });
    expect(personFromKey('ann')).toEqual({ via: 'cli', id: 'ann' });
    // A CLI user named like a chat person is that chat person (reprise ack --user slack:U0ANN).
    expect(personFromKey('slack:U0ANN', 'cli')).toEqual({ via: 'slack', id: 'U0ANN' });
    // Any surface's key reads as that surface's person, never as a CLI user called `rec:U-alice`.
    expect(personFromKey('rec:U-alice')).toEqual({ via: 'rec', id: 'U-alice' });
    expect(personFromKey('ann:')).toEqual({ via: 'cli', id: 'ann:' });
    expect(personFromKey('@ann:example.org')).toEqual({ via: 'cli', id: '@ann:example.org' });
  });

  it('a display name is one bounded line; nothing else is changed (renderers escape it)', () => {
    expect(cleanName('  Ann\n\tExample  ')).toBe('Ann Example');
    expect(cleanName('<!channel> *x*')).toBe('<!channel> *x*');
    expect(Array.from(cleanName('é'.repeat(200)))).toHaveLength(MAX_NAME);
    expect(cleanName(undefined)).toBe('');
    expect(personLabel({ via: 'slack', id: 'U0ANN' })).toBe('U0ANN');
    expect(personLabel({ via: 'slack', id: 'U0ANN', name: '   ' })).toBe('U0ANN');
  });

  it('an entry credit naming a person of a surface becomes that surface’s person when the directory knows exactly one by that name', () => {
    const known: Record<string, string> = { 'slack:U0ANN': 'ann', 'matrix:@ann:hs.example': 'Ann Example', 'slack:U0BO1': 'Bob', 'slack:U0BO2': 'bob' };
    const directory = {
      ...names(known),
      idOf: (via: string, name: string) => {
        const ids = Object.entries(known)
          .filter(([k, n]) => k.startsWith(`${via}:`) && n === name)
          .map(([k]) => k.slice(via.length + 1));
        return ids.length === 1 ? ids[0] : undefined;
      },
    };
    const credit = (name: string, from?: string) => ({ person: { via: 'entry', id: name, name, ...(from ? { from } : {}) } });
    expect(withNames([credit('ann', 'slack')], directory)).toEqual([{ person: { via: 'slack', id: 'U0ANN', name: 'ann' } }]);
    expect(withNames([credit('Ann Example', 'matrix')], directory)).toEqual([{ person: { via: 'matrix', id: '@ann:hs.example', name: 'Ann Example' } }]);
    // The name on another surface, nobody by that name, a name two people share (case differs only for one), no surface: a name it stays.
    for (const c of [credit('ann', 'matrix'), credit('carol', 'slack'), credit('Ann Example'), credit('<@U0ANN>', 'slack')])
      expect(withNames([c], directory)).toEqual([c]);
    expect(withNames([credit('Bob', 'slack')], directory)).toEqual([{ person: { via: 'slack', id: 'U0BO1', name: 'Bob' } }]);
    // A directory that cannot look names up (no idOf) leaves every credit as written.
    expect(withNames([credit('ann', 'slack')], names(known))).toEqual([credit('ann', 'slack')]);
  });

  it('fills display names from the directory (its name wins over the one the event carried) and leaves everything else as it was', () => {
    const view: NoticeView = {
      kind: 'notice',
      topic: 'status',
      icon: '👀',
      text: [{ person: { via: 'slack', id: 'U0ANN', name: 'u0ann' } }, ' and ', { person: { via: 'slack', id: 'U0BOB' } }, ' are on it'],
    };
    const out = withNames(view, names({ 'slack:U0ANN': 'Ann Example' }));
    expect(out.text).toEqual([
      { person: { via: 'slack', id: 'U0ANN', name: 'Ann Example' } },
      ' and ',
      { person: { via: 'slack', id: 'U0BOB' } },
      ' are on it',
    ]);
    expect(view.text[0]).toEqual({ person: { via: 'slack', id: 'U0ANN', name: 'u0ann' } });
    const unchanged = withNames(view, names({}));
    expect(unchanged).toBe(view);
    // An object that merely has a `person` key among others is not a person run.
    const other = { person: { via: 'slack', id: 'U0ANN' }, extra: 1 };
    expect(withNames(other, names({ 'slack:U0ANN': 'Ann' }))).toBe(other);
    expect(peopleIn(view)).toEqual([
      { via: 'slack', id: 'U0ANN' },
      { via: 'slack', id: 'U0BOB' },
    ]);
  });

  it('lists people as runs: "a", "a and b", "a, b and c", "… and N more"', () => {
    expect(peopleList(['a'])).toEqual(['a']);
    expect(peopleList(['a', 'b'])).toEqual(['a', ' and ', 'b']);
    expect(peopleList(['a', 'b', 'c'])).toEqual(['a', ', ', 'b', ' and ', 'c']);
    expect(peopleList(['a', 'b', 'c'], 2)).toEqual(['a', ', ', 'b', ' and 1 more']);
  });

  it("a person's words name the people they mention by display name, never as a ping, and leave unknown ids and other text alone", () => {
    const text = 'thanks @U0BOB and @U0BOB again; ask @W0CAROL, not @U0NOBODY or mail x@U0BOB.com; @here stays';
    expect(peopleMentioned(text, 'slack')).toEqual([
      { via: 'slack', id: 'U0BOB' },
      { via: 'slack', id: 'W0CAROL' },
      { via: 'slack', id: 'U0NOBODY' },
    ]);
    const known = names({ 'slack:U0BOB': 'Bob Example', 'slack:W0CAROL': '<@U0EVIL>\nCarol' });
    expect(namesInText(text, 'slack', known)).toBe(
      'thanks @Bob Example and @Bob Example again; ask @<@U0EVIL> Carol, not @U0NOBODY or mail x@U0BOB.com; @here stays',
    );
    // Matrix ids in Matrix text; another surface's ids are not this one's.
    expect(namesInText('paged @bob:example.org and @U0BOB', 'matrix', names({ 'matrix:@bob:example.org': 'bob' }))).toBe('paged @bob and @U0BOB');
    expect(peopleMentioned('thanks @U0BOB', 'mattermost')).toEqual([]);
    expect(namesInText('thanks @U0BOB', 'cli', known)).toBe('thanks @U0BOB');
  });
});
