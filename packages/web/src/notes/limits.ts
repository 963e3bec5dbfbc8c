/** The longest note firestore.rules accepts. */
export const maxNoteLength = 1000;
/** How long a deleted note can be brought back before it is deleted on the server. */
export const undoWindowMs = 6000;
