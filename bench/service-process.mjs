// The test service in a process of its own, so benchmarks cross the same process boundaries a real
// deployment does. Prints its URL on the first stdout line; exits when stdin closes.
import { FakeService } from '../test/fixtures/service.mjs';

const service = await new FakeService({ apiKey: process.argv[2] ?? 'bench-key-123456' }).start();
for (let i = 0; i < 10; i++) service.addProject({ name: `project ${i}`, description: 'benchmark', assets: [{}, {}] });
// Other accounts, for benchmarks of many callers: bench-tenant-0 ... with 10 projects each.
for (let t = 0; t < Number(process.argv[3] ?? 0); t++) {
  const owner = service.addTenant(`bench-tenant-${t}`);
  for (let i = 0; i < 10; i++)
    service.addProject({ name: `tenant ${t} project ${i}`, description: 'benchmark', assets: [{}, {}], owner });
}
process.stdout.write(`${service.url}\n`);
process.stdin.resume();
process.stdin.on('end', async () => {
  await service.stop();
  process.exit(0);
});
