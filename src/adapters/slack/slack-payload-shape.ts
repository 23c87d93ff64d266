/**
 * Whether a signed Slack payload has the shape Bolt dereferences while routing it. Bolt reads
 * `event.item.channel`, `body.user.id`, `body.channel.id`, `authorizations[0].team_id`… without
 * checking, so a correctly signed but malformed body (a replayed capture edited before signing
 * is impossible, but a buggy proxy or a test tool is not) would throw inside Bolt and be
 * answered 500 — which Slack retries. Checked first, it is a 400 naming the field.
 */

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** `what` present but not an object (null counts as absent only where `nullable`). */
function notObject(o: Obj, key: string, path: string, nullable = false): string | undefined {
  if (!(key in o) || o[key] === undefined || (nullable && o[key] === null)) return undefined;
  return isObj(o[key]) ? undefined : `${path} must be an object`;
}

function interactive(body: Obj): string | undefined {
  if (!isObj(body['user'])) return 'user must be an object';
  return notObject(body, 'channel', 'channel') ?? notObject(body, 'team', 'team', true) ?? notObject(body, 'enterprise', 'enterprise', true);
}

/** Why Bolt could not route `body`, or undefined when it can. */
export function malformedReason(body: Obj): string | undefined {
  if ('event' in body) {
    const event = body['event'];
    if (!isObj(event)) return 'event must be an object';
    if (typeof event['type'] !== 'string') return 'event.type must be a string';
    const bad = notObject(event, 'item', 'event.item') ?? notObject(event, 'subteam', 'event.subteam');
    if (bad) return bad;
    if ('channel' in event && typeof event['channel'] !== 'string' && !isObj(event['channel'])) return 'event.channel must be a string or an object';
    if ('user' in event && event['user'] !== undefined && typeof event['user'] !== 'string' && !isObj(event['user']))
      return 'event.user must be a string or an object';
    const auths = body['authorizations'];
    if (auths !== undefined && (!Array.isArray(auths) || auths.some((a) => !isObj(a)))) return 'authorizations must be a list of objects';
    return undefined;
  }
  if ('command' in body) return typeof body['command'] === 'string' ? undefined : 'command must be a string';
  if ('actions' in body) {
    const actions = body['actions'];
    if (!Array.isArray(actions) || actions.some((a) => !isObj(a))) return 'actions must be a list of objects';
    return interactive(body);
  }
  const type = body['type'];
  if ('name' in body || ['block_suggestion', 'dialog_submission', 'shortcut', 'message_action'].includes(String(type))) return interactive(body);
  if (type === 'view_submission' || type === 'view_closed') return isObj(body['view']) ? interactive(body) : 'view must be an object';
  return undefined;
}
