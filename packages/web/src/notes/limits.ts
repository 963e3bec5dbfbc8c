/** The longest note firestore.rules accepts. */
export const maxNoteLength = 1000;
/** How long a deleted note can be brought back before it is deleted on the server. */
export const undoWindowMs = 6000;

/** Said when a note is longer than the rules take (the text stays as typed or pasted, nothing is cut). */
export function tooLong(text: string): string | null {
  const length = text.trim().length;
  if (length <= maxNoteLength) return null;
  return `This note is ${length.toLocaleString()} characters long; a note holds at most ${maxNoteLength.toLocaleString()}. Shorten it or split it into several notes.`;
}
