/**
 * How a person says something to the bot in an incident thread, in each surface's own syntax
 * (issue 28 item 2): Matrix takes `!reprise …` commands, Slack a mention of the bot (or, for
 * `fixed:` and `ack`, a plain thread reply), the console the CLI's commands. Every hint the bot
 * gives ("what fixed it? Reply …", the help list) is built here, so no surface is told another's.
 */

/** `!reprise fixed: …` on Matrix, the CLI's command on the console, a mention elsewhere (Slack). */
export function fixSyntax(transport: string): string {
  return transport === 'matrix' ? '!reprise fixed: …' : transport === 'console' ? 'reprise fixed <trigger> …' : '@reprise fixed: …';
}

/** `!reprise postmortem` on Matrix, the CLI's command on the console, a mention elsewhere (Slack). */
export function postmortemSyntax(transport: string): string {
  return transport === 'matrix' ? '!reprise postmortem' : transport === 'console' ? 'reprise postmortem <trigger>' : '@reprise postmortem';
}
