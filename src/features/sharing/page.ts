import { createHash } from 'node:crypto';
import { securityHeaders } from '../../http/securityHeaders.js';
import type { NoteColor } from '../../shared/colors.js';
import { readLines } from '../../shared/markdown.js';
import type { SharedNoteView } from './service.js';

/**
 * The read-only HTML page behind a share link (D-SHARE-1): server-rendered, no script, every user
 * string escaped, one inline stylesheet allowed by its hash. Pure functions: no Fastify here.
 */

const NOTE_BACKGROUNDS: Record<NoteColor, string> = {
  default: '#ffffff',
  coral: '#faafa8',
  peach: '#f39f76',
  sand: '#fff8b8',
  mint: '#e2f6d3',
  sage: '#b4ddd3',
  fog: '#d4e4ed',
  storm: '#aeccdc',
  dusk: '#d3bfdb',
  blossom: '#f6e2dd',
  clay: '#e9e3d4',
  chalk: '#efeff1',
};

/** The same colours in dark mode (as the web app's). */
const NOTE_BACKGROUNDS_DARK: Record<NoteColor, string> = {
  default: '#202124',
  coral: '#77172e',
  peach: '#692b17',
  sand: '#7c4a03',
  mint: '#264d3b',
  sage: '#0c625d',
  fog: '#256377',
  storm: '#284255',
  dusk: '#472e5b',
  blossom: '#6c394f',
  clay: '#4b443a',
  chalk: '#232427',
};

const backgroundRules = (backgrounds: Record<NoteColor, string>) =>
  Object.entries(backgrounds)
    .map(([name, color]) => `.color-${name}{background:${color}}`)
    .join('\n');

const STYLESHEET = `
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%;text-size-adjust:100%}
body{margin:0;min-height:100vh;background:#eceff1;color:#202124;
font:16px/1.6 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;
padding:48px 24px}
.note{max-width:44rem;margin:0 auto;background:#fff;border:1px solid rgba(0,0,0,.1);border-radius:16px;
box-shadow:0 1px 3px rgba(60,64,67,.25),0 4px 12px rgba(60,64,67,.12);padding:36px 40px 24px;
overflow-wrap:anywhere}
${backgroundRules(NOTE_BACKGROUNDS)}
h1{font-size:1.75rem;line-height:1.25;font-weight:600;margin:0 0 .6em;letter-spacing:-.01em}
p{margin:0 0 1em}
a{color:#174ea6;text-decoration:underline;text-underline-offset:2px}
.checklist{list-style:none;margin:0 0 1em;padding:0}
.checklist li{padding:.15em 0}
.checklist .sub-item{padding-left:1.75em}
.checklist label{display:flex;gap:.65em;align-items:flex-start}
.checklist input{appearance:none;-webkit-appearance:none;flex:none;display:grid;place-content:center;
width:1.1em;height:1.1em;margin:.3em 0 0;border:2px solid #5f6368;border-radius:3px;background:transparent}
.checklist input:checked{background:#5f6368}
.checklist input:checked::before{content:"";width:.55em;height:.28em;border:solid #fff;border-width:0 0 2px 2px;
transform:translateY(-.08em) rotate(-45deg)}
.checklist .done span{text-decoration:line-through;color:#3c4043}
.images{display:grid;grid-template-columns:repeat(auto-fill,minmax(150px,1fr));gap:8px;margin:0 0 1.25em}
.images a{display:block;aspect-ratio:1;border-radius:10px;overflow:hidden;background:rgba(0,0,0,.06)}
.images img{display:block;width:100%;height:100%;object-fit:cover}
footer{margin-top:1.5em;padding-top:.9em;border-top:1px solid rgba(0,0,0,.1);color:#3c4043;font-size:.85rem}
.notice{text-align:center;padding-top:48px;padding-bottom:48px}
.notice p{color:#3c4043}
@media (max-width:600px){
body{padding:0;background:#fff}
.note{min-height:100vh;border:0;border-radius:0;box-shadow:none;padding:24px 20px 16px}
h1{font-size:1.45rem}
.images{grid-template-columns:repeat(2,1fr)}
}
@media (prefers-color-scheme:dark){
body{background:#202124;color:#e8eaed}
.note{border-color:rgba(255,255,255,.12);box-shadow:none}
${backgroundRules(NOTE_BACKGROUNDS_DARK)}
a{color:#8ab4f8}
.checklist input{border-color:#dadce0}
.checklist input:checked{background:#dadce0}
.checklist input:checked::before{border-color:#202124}
.checklist .done span,footer,.notice p{color:#dadce0}
footer{border-top-color:rgba(255,255,255,.16)}
.images a{background:rgba(255,255,255,.08)}
}
`;

/** The Content-Security-Policy of every page here: nothing runs, nothing loads but our images. */
export const PAGE_CSP_DIRECTIVES: Record<string, string[]> = {
  'default-src': ["'none'"],
  'img-src': ["'self'"],
  'style-src': [`'sha256-${createHash('sha256').update(STYLESHEET).digest('base64')}'`],
  'base-uri': ["'none'"],
  'form-action': ["'none'"],
  'frame-ancestors': ["'none'"],
};

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const URL_CANDIDATE = /https?:\/\/[^\s<>"'`]+/gi;
const TRAILING_PUNCTUATION = /[.,;:!?'"\]}*_]$/;

/** Drops sentence punctuation after a URL, and a closing parenthesis it did not open. */
function trimUrl(candidate: string): string {
  let url = candidate;
  for (;;) {
    if (TRAILING_PUNCTUATION.test(url)) url = url.slice(0, -1);
    else if (url.endsWith(')') && url.split('(').length < url.split(')').length) url = url.slice(0, -1);
    else return url;
  }
}

/** http(s) URLs only: nothing else in the text ever becomes a link (no javascript:, data:, ...). */
function linkHref(text: string): string | null {
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null;
  } catch {
    return null;
  }
}

/** Escaped text in which http(s) URLs become links that leak nothing about this page. */
function renderInline(text: string): string {
  let html = '';
  let last = 0;
  for (const match of text.matchAll(URL_CANDIDATE)) {
    const raw = trimUrl(match[0]);
    const href = linkHref(raw);
    if (!href) continue;
    html += escapeHtml(text.slice(last, match.index));
    html += `<a href="${escapeHtml(href)}" rel="noopener noreferrer nofollow">${escapeHtml(raw)}</a>`;
    last = match.index + raw.length;
  }
  return html + escapeHtml(text.slice(last));
}

/** A task's classes: ticked, and a sub-item (indented, as the web app writes Keep's one level of indent). */
function taskClass(line: { checked: boolean; indented: boolean }): string {
  const classes = [line.checked ? 'done' : '', line.indented ? 'sub-item' : ''].filter(Boolean);
  return classes.length > 0 ? ` class="${classes.join(' ')}"` : '';
}

/**
 * Content as blocks: runs of task lines (D-NOTE-6, as markdown.ts reads them) become a list of
 * disabled checkboxes; other runs of lines, code included, become paragraphs with their line
 * breaks kept; blank lines separate paragraphs.
 */
export function renderContent(content: string): string {
  const blocks: string[] = [];
  let paragraph: string[] = [];
  let tasks: string[] = [];
  const flush = () => {
    if (paragraph.length > 0) blocks.push(`<p>${paragraph.join('<br>\n')}</p>`);
    if (tasks.length > 0) blocks.push(`<ul class="checklist">\n${tasks.join('\n')}\n</ul>`);
    paragraph = [];
    tasks = [];
  };
  for (const line of readLines(content)) {
    if (line.kind === 'task') {
      if (paragraph.length > 0) flush();
      tasks.push(
        `<li${taskClass(line)}><label><input type="checkbox" disabled${line.checked ? ' checked' : ''}>` +
          `<span>${renderInline(line.label)}</span></label></li>`,
      );
    } else if (line.text.trim() === '') {
      flush();
    } else {
      if (tasks.length > 0) flush();
      paragraph.push(renderInline(line.text));
    }
  }
  flush();
  return blocks.join('\n');
}

function document(title: string, bodyClass: string, main: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta name="robots" content="noindex, nofollow">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)}</title>
<style>${STYLESHEET}</style>
</head>
<body>
<main class="note ${bodyClass}">
${main}
</main>
</body>
</html>
`;
}

/**
 * Made on first use: building an Intl.DateTimeFormat loads ICU's locale and time-zone data,
 * ~8 MiB of RSS that a server which never renders a shared page need not hold from start-up.
 */
let dateFormat: Intl.DateTimeFormat | undefined;
function sharedDateFormat(): Intl.DateTimeFormat {
  dateFormat ??= new Intl.DateTimeFormat('en', { dateStyle: 'medium', timeZone: 'UTC' });
  return dateFormat;
}

function attachmentUrl(token: string, attachmentId: string, thumb: boolean): string {
  const path = `/api/shared/${encodeURIComponent(token)}/attachment/${encodeURIComponent(attachmentId)}`;
  return thumb ? `${path}?thumb=1` : path;
}

export function renderSharedNotePage(view: SharedNoteView, token: string): string {
  const { note } = view;
  const color = note.color in NOTE_BACKGROUNDS ? note.color : 'default';
  const images = note.attachments.map((a) => {
    const full = escapeHtml(attachmentUrl(token, a.id, false));
    const preview = escapeHtml(attachmentUrl(token, a.id, view.thumbnails.has(a.id)));
    return `<a href="${full}"><img src="${preview}" alt="${escapeHtml(a.filename)}" loading="lazy"></a>`;
  });
  const parts = [
    note.title.trim() === '' ? '' : `<h1>${escapeHtml(note.title)}</h1>`,
    images.length > 0 ? `<div class="images">\n${images.join('\n')}\n</div>` : '',
    renderContent(note.content),
    `<footer>Shared read-only · updated <time datetime="${note.updatedAt}">${sharedDateFormat().format(
      new Date(note.updatedAt),
    )}</time></footer>`,
  ];
  return document(
    note.title.trim() === '' ? 'Shared note' : note.title,
    `color-${color}`,
    parts.filter(Boolean).join('\n'),
  );
}

/** The friendly page for a link that leads nowhere, or for a visitor who asked too often. */
export function renderNoticePage(notice: 'unavailable' | 'rate_limited' | 'error'): string {
  const texts = {
    unavailable: [
      'This note isn’t available',
      'The link may have been turned off by its owner, or the note was moved to the trash or deleted.',
    ],
    rate_limited: [
      'Too many requests',
      'This link was opened too often in a short time. Please wait a minute and try again.',
    ],
    error: ['Something went wrong', 'The note could not be shown right now. Please try again later.'],
  } as const;
  const [heading, text] = texts[notice];
  return renderMessagePage(heading, text);
}

/** A page that says one thing (plain text, escaped here), with an optional link onwards. */
export function renderMessagePage(
  heading: string,
  text: string,
  link?: { href: string; text: string },
): string {
  const onwards = link ? `\n<p><a href="${escapeHtml(link.href)}">${escapeHtml(link.text)}</a></p>` : '';
  return document(heading, 'notice', `<h1>${escapeHtml(heading)}</h1>\n<p>${escapeHtml(text)}</p>${onwards}`);
}

/** The headers of every page here: its own CSP (exactly its stylesheet, our images). */
export const PAGE_SECURITY_HEADERS = securityHeaders({
  contentSecurityPolicy: { useDefaults: false, directives: PAGE_CSP_DIRECTIVES },
});
