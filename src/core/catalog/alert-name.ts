/**
 * Whether a file name or heading looks like a Prometheus-style alert name
 * (`KubePodCrashLooping`, `CPUThrottlingHigh`, `etcdNoLeader`, `Watchdog`): one identifier,
 * no separators, both upper- and lower-case letters. Runbook repositories name one file per
 * alert this way; plain lower-case words ("overview") and snake_case do not qualify.
 */
export function isAlertNameShaped(s: string): boolean {
  return /^[A-Za-z][A-Za-z0-9]+$/.test(s) && /[A-Z]/.test(s) && /[a-z]/.test(s);
}

/**
 * Stricter test for headings, where a capitalised plain word ("# Overview") is common: the
 * identifier must also have a CamelCase hump (`etcdNoLeader`, `KubeAPIDown`).
 */
export function isCamelCaseAlertName(s: string): boolean {
  return isAlertNameShaped(s) && /[a-z0-9][A-Z]|[A-Z]{2}[a-z]/.test(s);
}
