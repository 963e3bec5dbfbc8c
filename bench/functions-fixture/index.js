// The bench's code base: a trigger that does nothing, so what is measured is Hearth's delivery.
const { onDocumentCreated } = require('firebase-functions/v2/firestore');
exports.onItem = onDocumentCreated('benchItems/{id}', () => undefined);
