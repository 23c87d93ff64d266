/** The options every `reprise import <source>` takes for filing what it read (postmortems, PagerDuty). */
export const IMPORT_FILING_OPTIONS = {
  'dry-run': { type: 'boolean', description: 'print what would be filed; write nothing' },
  json: { type: 'boolean', description: 'print JSON instead of text' },
  batch: { type: 'string', description: 'new entries per pull request (default 10, at most 50)', valueName: 'N' },
  catalog: { type: 'string', description: 'catalog to dedup against (default: the one the bot serves)', valueName: 'DIR' },
  config: { type: 'string', short: 'c', description: 'config file (default: $REPRISE_CONFIG, else ./reprise.yaml)', valueName: 'FILE' },
} as const;
