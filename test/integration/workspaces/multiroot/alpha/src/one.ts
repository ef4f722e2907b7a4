// A fixture of the multi-root run: the first folder's source file.
export const alphaValue = 'ALPHA-SOURCE-TEXT';
