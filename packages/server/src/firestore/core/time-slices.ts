/**
 * Long synchronous work cut into slices: between slices other requests get the event loop. A
 * commit of hundreds of large documents takes 100 ms and more to decode and encode; done in one
 * go, every other caller of the process waits that long.
 */
export const sliceMs = 8;
/**
 * Bytes of document data worked on per slice at most, whatever the clock says: about 2 ms of
 * encoding, so a slice stays short on a fast machine too, and how often a big job gives way does
 * not hang on timing alone.
 */
export const sliceBytes = 256 * 1024;

export class TimeSlices {
  private sliceStart = performance.now();
  private sliceWork = 0;

  /** Gives way to other work when this slice has run `sliceMs` or worked on `sliceBytes`; resolves at once otherwise. */
  async pause(bytesDone = 0): Promise<void> {
    this.sliceWork += bytesDone;
    if (this.sliceWork < sliceBytes && performance.now() - this.sliceStart < sliceMs) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.sliceWork = 0;
    this.sliceStart = performance.now();
  }
}

/** `map` over `items` in slices; the same result as `items.map(each)`. */
export async function mapInSlices<T, U>(items: readonly T[], each: (item: T, index: number) => U, slices = new TimeSlices()): Promise<U[]> {
  const out: U[] = [];
  for (let i = 0; i < items.length; i++) {
    await slices.pause();
    out.push(each(items[i]!, i));
  }
  return out;
}
