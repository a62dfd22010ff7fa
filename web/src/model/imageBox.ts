/**
 * The ratio (width / height) of an image's box on a card and in the editor: the image's own,
 * kept between 1:2 and 3:1 (a long screenshot or panorama is cropped to fit rather than a strip);
 * null for an image of unknown size, whose box the stylesheet makes 4:3.
 */
const MIN_RATIO = 1 / 2;
const MAX_RATIO = 3;
export const UNKNOWN_RATIO = 4 / 3;

export function imageBoxRatio(
  width: number | null | undefined,
  height: number | null | undefined,
): number | null {
  if (!width || !height) return null;
  return Math.min(Math.max(width / height, MIN_RATIO), MAX_RATIO);
}
