/**
 * Lays out rendered blocks into a `body` / `formatted_body` pair within a byte budget. Matrix
 * rejects events over 65,536 bytes (the whole event, envelope included): a message that does
 * not fit is cut at a block or list-item boundary (so the HTML stays well-formed) and ends with
 * "…" and a link to where the rest can be read — never a failed send.
 */

/** The same content as plain text (`body`) and HTML (`formatted_body`); both already escaped. */
export interface Piece {
  text: string;
  html: string;
}

/** A paragraph, or a list / table that may be cut between its items. */
export type Block =
  | { kind: 'para'; piece: Piece }
  | { kind: 'pre'; piece: Piece }
  | { kind: 'list'; ordered: boolean; head?: Piece; items: Piece[] }
  | { kind: 'table'; head?: Piece; columns: [string, string]; rows: Piece[] };

/** Bytes `s` takes inside a JSON string (what the homeserver counts). */
export function jsonBytes(s: string): number {
  return Buffer.byteLength(JSON.stringify(s), 'utf8') - 2;
}

interface Parts {
  text: string[];
  html: string[];
}

function openList(b: Extract<Block, { kind: 'list' | 'table' }>): Piece {
  const head = b.head ? { text: `${b.head.text}\n`, html: `<p>${b.head.html}</p>` } : { text: '', html: '' };
  if (b.kind === 'list') return { text: head.text, html: `${head.html}<${b.ordered ? 'ol' : 'ul'}>` };
  const [k, v] = b.columns;
  return { text: head.text, html: `${head.html}<table><thead><tr><th>${k}</th><th>${v}</th></tr></thead><tbody>` };
}

function closeList(b: Extract<Block, { kind: 'list' | 'table' }>): Piece {
  if (b.kind === 'list') return { text: '', html: b.ordered ? '</ol>' : '</ul>' };
  return { text: '', html: '</tbody></table>' };
}

function item(b: Extract<Block, { kind: 'list' | 'table' }>, p: Piece, i: number, last: boolean): Piece {
  const nl = last ? '' : '\n';
  if (b.kind === 'table') return { text: `${p.text}${nl}`, html: p.html };
  const bullet = b.ordered ? `${i + 1}. ` : '• ';
  return { text: `${bullet}${p.text}${nl}`, html: `<li>${p.html}</li>` };
}

function whole(b: Block): Piece {
  if (b.kind === 'para') return { text: b.piece.text, html: `<p>${b.piece.html}</p>` };
  if (b.kind === 'pre') return { text: b.piece.text, html: `<pre><code>${b.piece.html}</code></pre>` };
  const items = b.kind === 'list' ? b.items : b.rows;
  const open = openList(b);
  const close = closeList(b);
  let text = open.text;
  let out = open.html;
  items.forEach((p, i) => {
    const it = item(b, p, i, i === items.length - 1);
    text += it.text;
    out += it.html;
  });
  return { text: text + close.text, html: out + close.html };
}

function size(p: Piece): number {
  return jsonBytes(p.text) + jsonBytes(p.html);
}

/** Blocks are separated by a blank line in `body`; HTML blocks need no separator. */
const SEP: Piece = { text: '\n\n', html: '' };

/**
 * Joins `blocks` into `{body, formatted_body}` whose JSON-escaped strings take at most `budget`
 * bytes together. When they do not fit, as many whole blocks (and list items) as fit are kept
 * and `more` (the "… truncated" line with its link) ends the message.
 */
export function layout(blocks: readonly Block[], budget: number, more: Piece): { body: string; formatted_body: string } {
  const rendered = blocks.map(whole);
  const full = join(rendered);
  if (size(full) <= budget) return { body: full.text, formatted_body: full.html };

  const moreBlock = whole({ kind: 'para', piece: more });
  const room = budget - size(moreBlock) - size(SEP);
  const kept: Parts = { text: [], html: [] };
  let used = 0;
  const push = (p: Piece): void => {
    kept.text.push(p.text);
    kept.html.push(p.html);
    used += size(p);
  };
  for (let i = 0; i < blocks.length; i++) {
    const b = blocks[i]!;
    const r = rendered[i]!;
    const sep = kept.text.length > 0 ? size(SEP) : 0;
    if (used + sep + size(r) <= room) {
      if (sep) push(SEP);
      push(r);
      continue;
    }
    if (b.kind === 'list' || b.kind === 'table') {
      const open = openList(b);
      const close = closeList(b);
      const items = b.kind === 'list' ? b.items : b.rows;
      let partial = { ...open };
      let fitted = 0;
      for (let j = 0; j < items.length; j++) {
        const it = item(b, items[j]!, j, true);
        const next = { text: partial.text + (fitted > 0 ? '\n' : '') + it.text, html: partial.html + it.html };
        if (used + sep + size(next) + size(close) > room) break;
        partial = next;
        fitted++;
      }
      if (fitted > 0) {
        if (sep) push(SEP);
        push({ text: partial.text + close.text, html: partial.html + close.html });
      }
    }
    break;
  }
  if (kept.text.length > 0) push(SEP);
  push(moreBlock);
  return { body: kept.text.join(''), formatted_body: kept.html.join('') };
}

function join(pieces: Piece[]): Piece {
  return { text: pieces.map((p) => p.text).join(SEP.text), html: pieces.map((p) => p.html).join(SEP.html) };
}
