// A fixture for the tools' integration tests.
export const greeting = 'hello from the fixture';
