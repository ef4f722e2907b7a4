// A fixture of the multi-root run: the second folder's source file.
export const betaValue = 'BETA-SOURCE-TEXT';
