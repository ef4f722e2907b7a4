// The URI scheme of Apply's proposals, in its own file so that the eager bundle can name it without loading dist/apply.js.

/** The read-only scheme of proposals (and of the empty left side of a new file's review). */
export const PROPOSAL_SCHEME = 'parley-proposed';
