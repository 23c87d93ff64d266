type TypedArray = Uint8Array | Int32Array | Uint32Array | Float64Array;

/**
 * `a` itself when it already holds `min` elements, else a copy at least twice as long (so
 * appends cost amortised O(1)), the new tail filled with `fill`.
 */
export function grow<T extends TypedArray>(a: T, min: number, fill = 0): T {
  if (a.length >= min) return a;
  const Ctor = a.constructor as new (length: number) => T;
  const b = new Ctor(Math.max(min, a.length * 2, 16));
  b.set(a as never);
  if (fill !== 0) b.fill(fill, a.length);
  return b;
}
