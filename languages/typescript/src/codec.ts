/** Shorthands on the default layout. */
import type { ComposeParts, Parts } from "./layout.js";
import { SNOWID } from "./presets.js";

/** Decodes an id of the default snowid layout. */
export function decode(id: bigint): Parts {
  return SNOWID.decode(id);
}

/** Composes an id of the default snowid layout. */
export function compose(parts: ComposeParts): bigint {
  return SNOWID.compose(parts);
}

/** The smallest and largest ids of the default layout issued from `fromMs` to `toMs` inclusive. */
export function bounds(fromMs: number, toMs: number): { readonly min: bigint; readonly max: bigint } {
  return { min: SNOWID.minId(fromMs), max: SNOWID.maxIdAt(toMs) };
}
