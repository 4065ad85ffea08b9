// A test-service project whose assets are the generated media, served behind signed links.
import { makeAll } from '../fixtures/media.mjs';
import type { FakeService } from '../fixtures/service.mjs';

export type MediaName = 'red' | 'blue' | 'green_vertical' | 'black' | 'mute_yellow' | 'voice' | 'still';

export function mediaProject(
  service: FakeService,
  name = 'media project',
): { projectId: string; ids: Record<MediaName, string> } {
  const files = makeAll() as Record<MediaName, string>;
  const project = service.addProject({ name });
  const ids = {} as Record<MediaName, string>;
  for (const [media, path] of Object.entries(files) as [MediaName, string][]) {
    const keyname = `${media}-${project.id.slice(0, 8)}`;
    service.media.set(keyname, path);
    const kind = media === 'voice' ? 'audio' : media === 'still' ? 'image' : 'generated_video';
    ids[media] = service.addAsset(project.id, { keyname, asset_type: kind, ext: path.split('.').pop() }).id;
  }
  return { projectId: project.id, ids };
}
