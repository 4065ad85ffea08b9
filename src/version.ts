// The name and version cutroom gives itself. Kept equal to package.json's version (a unit test checks it), so no
// file is read at start.
export const NAME = 'cutroom';
export const VERSION = '0.1.0';
