/**
 * The masonry grid's geometry and each card's estimated height. The grid is a virtual list
 * (@tanstack/virtual-core with one lane per column, decision 0041): it puts each card in the
 * shortest column so far, so the first notes fill the top row left to right as in Keep, and
 * measures the cards it renders; the estimate stands for a card until it has been rendered.
 */
import type { LocalNote } from '../sync/index.js';
import { imageBoxRatio, UNKNOWN_RATIO } from './imageBox.js';

/** Keep's card width, in CSS pixels, and the gap between cards (a phone's is narrower). */
const CARD_WIDTH = 240;
const CARD_GAP = 16;
const NARROW_GAP = 8;
/** The list view's one column. */
const LIST_WIDTH = 600;

/** Below this width (a phone) two narrower columns, as Keep's app shows. */
const NARROW = 600;

export function columnCount(width: number): number {
  if (width < NARROW) return 2;
  return Math.max(1, Math.floor((width + CARD_GAP) / (CARD_WIDTH + CARD_GAP)));
}

interface GridGeometry {
  columns: number;
  cardWidth: number;
  gap: number;
  /** Where the first column starts: the columns are centred in the grid's width. */
  left: number;
}

/** The columns of a grid `width` wide: Keep-width cards, two that share a phone's width, or one list. */
export function gridGeometry(width: number, list: boolean): GridGeometry {
  if (list) {
    const cardWidth = Math.min(LIST_WIDTH, width);
    return { columns: 1, cardWidth, gap: CARD_GAP, left: (width - cardWidth) / 2 };
  }
  const columns = columnCount(width);
  if (width < NARROW) {
    return { columns, cardWidth: (width - NARROW_GAP * (columns - 1)) / columns, gap: NARROW_GAP, left: 0 };
  }
  const used = columns * CARD_WIDTH + (columns - 1) * CARD_GAP;
  return { columns, cardWidth: CARD_WIDTH, gap: CARD_GAP, left: Math.max(0, (width - used) / 2) };
}

/** The x of a card in `column`. */
export function columnLeft(geometry: GridGeometry, column: number): number {
  return geometry.left + column * (geometry.cardWidth + geometry.gap);
}

/*
 * A card's parts, in CSS pixels (app.css): its border and padding (the bottom one holds the
 * buttons shown on hover), a line of text, a title's line and margin, a checklist row, the chips.
 */
const FRAME = 2 + 12 + 44;
const LINE = 19;
const TITLE_LINE = 21;
const TITLE_MARGIN = 8;
const ITEM_ROW = 24;
const CHIPS = 30;
/** The card shows at most 16 lines of text and 10 open items. */
const MAX_LINES = 16;
const MAX_ITEMS = 10;
/** Characters per line of text, per pixel of the text's width (a 240 px card holds about 28). */
const CHARS_PER_PX = 28 / 206;
const CARD_PADDING_X = 34;
/** A card's images share rows of boxes at least this wide (app.css's .note-images), 2 px apart. */
const IMAGE_MIN_WIDTH = 96;
const IMAGE_GAP = 2;

/**
 * About how tall the card of `note` is, `cardWidth` wide: wrapped lines of its title and text
 * (capped as the card caps them), its open items, an image's box, its chips.
 */
export function estimatedHeight(note: LocalNote, cardWidth: number): number {
  const known = estimates.get(note);
  if (known?.cardWidth === cardWidth) return known.height;
  const height = estimate(note, cardWidth);
  estimates.set(note, { cardWidth, height });
  return height;
}

/**
 * Estimates by note object (an edit makes a new one): the virtual list asks again for every card
 * after the first one whose size changed, each time cards are measured.
 */
const estimates = new WeakMap<LocalNote, { cardWidth: number; height: number }>();

function estimate(note: LocalNote, cardWidth: number): number {
  const perLine = Math.max(8, Math.floor((cardWidth - CARD_PADDING_X) * CHARS_PER_PX));
  const wrapped = (text: string) => Math.max(1, Math.ceil(text.length / perLine));
  let height = FRAME;
  if (note.title) height += wrapped(note.title) * TITLE_LINE + TITLE_MARGIN;
  const lines = note.content.trimEnd().split('\n', MAX_LINES + 1);
  if (note.checklistMode) {
    const open = lines.filter((line) => /^\s*[-*] \[ \]/.test(line)).slice(0, MAX_ITEMS);
    height += open.reduce((sum, line) => sum + Math.max(ITEM_ROW, wrapped(line) * LINE), 0);
  } else {
    let textLines = 0;
    for (const line of lines) textLines += wrapped(line);
    height += Math.min(textLines, MAX_LINES) * LINE;
  }
  height += imagesHeight(note, cardWidth);
  if (note.tags.length > 0) height += CHIPS;
  return height;
}

/** The rows of a card's image boxes, each as tall as the first image's box is for its width. */
function imagesHeight(note: LocalNote, cardWidth: number): number {
  const count = note.attachments.length;
  if (count === 0) return 0;
  const perRow = Math.min(
    count,
    Math.max(1, Math.floor((cardWidth + IMAGE_GAP) / (IMAGE_MIN_WIDTH + IMAGE_GAP))),
  );
  const rows = Math.ceil(count / perRow);
  const first = note.attachments[0]!;
  const ratio = imageBoxRatio(first.width, first.height) ?? UNKNOWN_RATIO;
  return Math.round(rows * ((cardWidth - (perRow - 1) * IMAGE_GAP) / perRow / ratio + IMAGE_GAP));
}
