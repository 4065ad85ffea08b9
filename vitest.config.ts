import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Liveness bounds, not timing targets: a shared machine under load runs ffmpeg several times slower.
    testTimeout: 90_000,
    hookTimeout: 90_000,
    // Integration tests spawn servers and ffmpeg; two cores, so keep the pool small.
    maxWorkers: 2,
  },
});
